//! Spec: `crosscheck telemetry upload` against a mock collector. Batches of at most N records
//! as `application/x-ndjson` in the export's line format; never any source text; a watermark
//! so reruns send only new records and a failed batch is resent; retries on 5xx; no upload
//! without a user-configured https (or loopback http) URL; the bearer token sent but never
//! shown.

use crate::store_support;

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use crosscheck::crosscheck::record::CrossCheckRecord;
use serde_json::Value;
use store_support::{bin, open, record, temp_db};
use wiremock::matchers::{header, method, path};
use wiremock::{Mock, MockServer, Request, ResponseTemplate};

const TOKEN: &str = "upl-tok-0123456789SECRET";
const TOKEN_VAR: &str = "CROSSCHECK_TEST_UPLOAD_TOKEN";

/// A store at `db` holding `n` records `r00`, `r01`, ... one second apart.
fn store_with(db: &Path, ids: std::ops::Range<usize>) -> Vec<CrossCheckRecord> {
    let store = open(db);
    let rs: Vec<CrossCheckRecord> = ids
        .map(|i| record(&format!("r{i:02}"), 1_714_521_600 + i as i64))
        .collect();
    store.insert_records(&rs).expect("insert");
    rs
}

/// A user config file with `[telemetry]` settings (fast retries for tests).
fn config(dir: &Path, url: Option<&str>, token: bool) -> PathBuf {
    let mut text = String::from("[telemetry]\nupload_retries = 2\nupload_backoff_ms = 5\n");
    if let Some(u) = url {
        text.push_str(&format!("upload_url = \"{u}\"\n"));
    }
    if token {
        text.push_str(&format!("upload_token_env = \"{TOKEN_VAR}\"\n"));
    }
    let p = dir.join("config.toml");
    std::fs::write(&p, text).expect("write config");
    p
}

/// Runs `crosscheck telemetry --db DB upload ARGS` with only the given config (no other
/// crosscheck variables leak in from the environment running the tests).
async fn upload(db: &Path, config: &Path, args: &[&str]) -> Output {
    let mut cmd = Command::new(bin());
    cmd.arg("telemetry")
        .arg("--db")
        .arg(db)
        .arg("upload")
        .args(args)
        .env("CROSSCHECK_CONFIG", config)
        .env("CROSSCHECK_LOG", "trace")
        .env_remove("CROSSCHECK_TELEMETRY_UPLOAD_URL")
        .env_remove("CROSSCHECK_TELEMETRY_UPLOAD_TOKEN_ENV")
        .env(TOKEN_VAR, TOKEN);
    tokio::task::spawn_blocking(move || cmd.output().expect("run crosscheck"))
        .await
        .expect("join")
}

fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

/// The JSON lines of one request body.
fn lines(req: &Request) -> Vec<Value> {
    String::from_utf8_lossy(&req.body)
        .lines()
        .map(|l| serde_json::from_str(l).expect("JSON line"))
        .collect()
}

fn ids(reqs: &[Request]) -> Vec<Vec<String>> {
    reqs.iter()
        .map(|r| {
            lines(r)
                .iter()
                .map(|l| l["id"].as_str().unwrap_or("").to_string())
                .collect()
        })
        .collect()
}

async fn received(server: &MockServer) -> Vec<Request> {
    server.received_requests().await.unwrap_or_default()
}

fn ok_collector() -> Mock {
    Mock::given(method("POST"))
        .and(path("/ingest"))
        .respond_with(ResponseTemplate::new(202))
}

#[tokio::test(flavor = "multi_thread")]
async fn records_go_in_batches_of_n_as_ndjson_export_lines() {
    let server = MockServer::start().await;
    ok_collector().mount(&server).await;
    let (dir, db) = temp_db();
    store_with(&db, 0..5);
    let cfg = config(dir.path(), Some(&format!("{}/ingest", server.uri())), false);
    let out = upload(&db, &cfg, &["--batch-size", "2"]).await;
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let reqs = received(&server).await;
    assert_eq!(
        ids(&reqs),
        vec![vec!["r00", "r01"], vec!["r02", "r03"], vec!["r04"]],
        "oldest first, at most 2 per request"
    );
    for r in &reqs {
        assert_eq!(
            r.headers.get("content-type").and_then(|v| v.to_str().ok()),
            Some("application/x-ndjson")
        );
        assert!(r.headers.get("authorization").is_none(), "no token set");
        for l in lines(r) {
            assert_eq!(l["schema_version"], 1, "{l}");
            assert_eq!(l["kind"], "record", "{l}");
            assert_eq!(l["task"], "ast");
            assert!(
                l.get("time_utc").is_some() && l.get("labels").is_some(),
                "{l}"
            );
        }
    }
    assert!(stderr(&out).contains("uploaded 5 record(s) in 3 batch(es)"));
}

#[tokio::test(flavor = "multi_thread")]
async fn stored_source_text_is_never_uploaded() {
    let server = MockServer::start().await;
    ok_collector().mount(&server).await;
    let (dir, db) = temp_db();
    let store = open(&db);
    let mut r = record("with-code", 1_714_521_600);
    r.source_text = Some("def leak_me(): return 'SOURCE-MARKER'".into());
    store.insert_record(&r).expect("insert");
    drop(store);
    let cfg = config(dir.path(), Some(&format!("{}/ingest", server.uri())), false);
    // The dry run shows what would be sent, and sends nothing.
    let dry = upload(&db, &cfg, &["--dry-run"]).await;
    assert_eq!(dry.status.code(), Some(0), "{}", stderr(&dry));
    let shown = String::from_utf8_lossy(&dry.stdout).into_owned();
    assert!(shown.contains("with-code"), "{shown}");
    assert!(
        received(&server).await.is_empty(),
        "a dry run sends nothing"
    );
    let out = upload(&db, &cfg, &[]).await;
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let reqs = received(&server).await;
    assert_eq!(reqs.len(), 1);
    let body = String::from_utf8_lossy(&reqs[0].body);
    assert_eq!(body, shown, "the dry run printed exactly the body");
    assert!(!body.contains("SOURCE-MARKER"), "{body}");
    assert!(!body.contains("source_text"), "the key is removed: {body}");
}

#[tokio::test(flavor = "multi_thread")]
async fn a_rerun_uploads_only_records_added_since() {
    let server = MockServer::start().await;
    ok_collector().mount(&server).await;
    let (dir, db) = temp_db();
    store_with(&db, 0..3);
    let cfg = config(dir.path(), Some(&format!("{}/ingest", server.uri())), false);
    assert_eq!(upload(&db, &cfg, &[]).await.status.code(), Some(0));
    let again = upload(&db, &cfg, &[]).await;
    assert_eq!(again.status.code(), Some(0));
    assert!(stderr(&again).contains("nothing new"), "{}", stderr(&again));
    assert_eq!(received(&server).await.len(), 1, "nothing new: no request");
    store_with(&db, 3..5);
    assert_eq!(upload(&db, &cfg, &[]).await.status.code(), Some(0));
    assert_eq!(
        ids(&received(&server).await),
        vec![vec!["r00", "r01", "r02"], vec!["r03", "r04"]]
    );
    assert!(db.with_file_name("crosscheck.db.upload.json").is_file());
}

#[tokio::test(flavor = "multi_thread")]
async fn a_failed_batch_stops_the_run_and_is_resent_next_time() {
    let server = MockServer::start().await;
    // First batch accepted, then the collector is down for good (every retry fails).
    Mock::given(method("POST"))
        .respond_with(ResponseTemplate::new(200))
        .up_to_n_times(1)
        .with_priority(1)
        .mount(&server)
        .await;
    Mock::given(method("POST"))
        .respond_with(ResponseTemplate::new(503).set_body_string("maintenance"))
        .with_priority(2)
        .mount(&server)
        .await;
    let (dir, db) = temp_db();
    store_with(&db, 0..5);
    let cfg = config(dir.path(), Some(&format!("{}/ingest", server.uri())), false);
    let out = upload(&db, &cfg, &["--batch-size", "2"]).await;
    assert_eq!(out.status.code(), Some(1));
    let err = stderr(&out);
    assert!(
        err.contains("503") && err.contains("batch 2") && err.contains("after record r01"),
        "{err}"
    );
    assert_eq!(
        received(&server).await.len(),
        1 + 3,
        "batch 1, then 3 attempts of batch 2"
    );

    server.reset().await;
    ok_collector().mount(&server).await;
    let out = upload(&db, &cfg, &["--batch-size", "2"]).await;
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert_eq!(
        ids(&received(&server).await),
        vec![vec!["r02", "r03"], vec!["r04"]],
        "resumes after the last batch that went through"
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn a_500_is_retried_and_then_succeeds() {
    let server = MockServer::start().await;
    Mock::given(method("POST"))
        .respond_with(ResponseTemplate::new(500))
        .up_to_n_times(1)
        .with_priority(1)
        .mount(&server)
        .await;
    ok_collector().with_priority(2).mount(&server).await;
    let (dir, db) = temp_db();
    store_with(&db, 0..2);
    let cfg = config(dir.path(), Some(&format!("{}/ingest", server.uri())), false);
    let out = upload(&db, &cfg, &[]).await;
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let reqs = received(&server).await;
    assert_eq!(reqs.len(), 2, "one failure, one retry");
    assert_eq!(reqs[0].body, reqs[1].body, "the same batch is resent");
}

#[tokio::test(flavor = "multi_thread")]
async fn plain_http_to_a_remote_host_is_refused() {
    let (dir, db) = temp_db();
    store_with(&db, 0..1);
    for url in [
        "http://telemetry.example.org/ingest",
        "ftp://telemetry.example.org/",
    ] {
        let cfg = config(dir.path(), Some(url), false);
        let out = upload(&db, &cfg, &[]).await;
        assert_eq!(out.status.code(), Some(2), "{url}");
        assert!(stderr(&out).contains("https://"), "{}", stderr(&out));
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn no_configured_url_is_a_clear_refusal() {
    let (dir, db) = temp_db();
    store_with(&db, 0..1);
    let cfg = config(dir.path(), None, false);
    let out = upload(&db, &cfg, &[]).await;
    assert_eq!(out.status.code(), Some(2));
    let err = stderr(&out);
    assert!(
        err.contains("no telemetry upload URL is configured")
            && err.contains("upload_url")
            && err.contains("CROSSCHECK_TELEMETRY_UPLOAD_URL"),
        "{err}"
    );
    assert!(
        !db.with_file_name("crosscheck.db.upload.json").exists(),
        "no watermark without an upload"
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn the_token_is_sent_as_bearer_and_never_shown() {
    let server = MockServer::start().await;
    Mock::given(method("POST"))
        .and(header("authorization", format!("Bearer {TOKEN}").as_str()))
        .respond_with(ResponseTemplate::new(200))
        .up_to_n_times(1)
        .with_priority(1)
        .mount(&server)
        .await;
    // Then the collector rejects the token and echoes it back in its error body.
    Mock::given(method("POST"))
        .respond_with(
            ResponseTemplate::new(401).set_body_string(format!("bad token {TOKEN} for you")),
        )
        .with_priority(2)
        .mount(&server)
        .await;
    let (dir, db) = temp_db();
    store_with(&db, 0..2);
    let cfg = config(dir.path(), Some(&format!("{}/ingest", server.uri())), true);
    let out = upload(&db, &cfg, &["--batch-size", "1"]).await;
    assert_eq!(out.status.code(), Some(1));
    let reqs = received(&server).await;
    assert_eq!(reqs.len(), 2, "401 is not retried");
    assert_eq!(
        reqs[0]
            .headers
            .get("authorization")
            .and_then(|v| v.to_str().ok()),
        Some(format!("Bearer {TOKEN}").as_str())
    );
    let err = stderr(&out);
    assert!(err.contains("401") && err.contains("[redacted]"), "{err}");
    assert!(!err.contains(TOKEN), "the token leaked into stderr: {err}");
    assert!(!String::from_utf8_lossy(&out.stdout).contains(TOKEN));
}
