//! Records, labels and the cache: round trips, idempotency, what is (not) stored, filters,
//! retention and LRU eviction.

use crate::store_support;

use std::collections::BTreeMap;

use crosscheck::crosscheck::record::{CacheBackend, HumanLabel, RecordSink, Tier};
use crosscheck::store::{RecordFilter, Retention, Store, StoreConfig, StoreError};
use rusqlite::Connection;
use serde_json::json;
use store_support::{open, record, sample, temp_db};

const DAY: i64 = 86_400;

fn label(subject: &str, correct: bool, timestamp: i64, note: Option<&str>) -> HumanLabel {
    HumanLabel {
        subject: subject.into(),
        correct,
        timestamp,
        note: note.map(Into::into),
    }
}

#[test]
fn a_record_round_trips_field_for_field() {
    let (_dir, path) = temp_db();
    let store = open(&path);
    let mut r = record("r1", 1_700_000_000);
    r.tier = Some(Tier::Refuted);
    r.pass = Some(false);
    r.instability = 1.0 / 3.0;
    r.scores.insert("jump_fabrication".into(), 0.1 + 0.2);
    r.samples = vec![
        sample(json!({"verdict": "yes", "key_lines": {"3": "x"}})),
        sample(json!("unparsable text")),
    ];
    r.samples[1].parsed = false;
    r.samples[1].from_cache = true;
    assert!(store.insert_record(&r).unwrap());
    assert_eq!(store.get_record("r1").unwrap(), Some(r.clone()));
    assert_eq!(store.get_record("missing").unwrap(), None);
    // A second store on the same file reads the same record.
    assert_eq!(open(&path).get_record("r1").unwrap(), Some(r));
}

#[test]
fn indexed_columns_hold_the_record_fields_and_body_holds_the_rest() {
    let (_dir, path) = temp_db();
    let store = open(&path);
    let mut r = record("r1", 42);
    r.tier = Some(Tier::AnalyzerOnly);
    store.insert_record(&r).unwrap();
    let c = Connection::open(&path).unwrap();
    let (task, language, model, ts, tier, pass, body): (
        String,
        String,
        String,
        i64,
        String,
        i64,
        String,
    ) = c
        .query_row(
            "SELECT task, language, model, timestamp, tier, pass, body FROM records",
            [],
            |row| {
                Ok((
                    row.get(0)?,
                    row.get(1)?,
                    row.get(2)?,
                    row.get(3)?,
                    row.get(4)?,
                    row.get(5)?,
                    row.get(6)?,
                ))
            },
        )
        .unwrap();
    assert_eq!(
        (task.as_str(), language.as_str(), model.as_str(), ts),
        ("ast", "python", "model-a", 42)
    );
    assert_eq!((tier.as_str(), pass), ("analyzer-only", 1));
    let body: serde_json::Value = serde_json::from_str(&body).unwrap();
    for column in ["id", "timestamp", "task", "tier", "pass", "source_text"] {
        assert!(body.get(column).is_none(), "{column} duplicated in body");
    }
    assert_eq!(body["code_hash"], json!(r.code_hash));
    assert_eq!(body["scores"]["statement_gap"], json!(0.25));
}

#[test]
fn source_text_is_stored_only_when_the_record_carries_it() {
    let (_dir, path) = temp_db();
    let store = open(&path);
    let without = record("plain", 1);
    let mut with = record("opted-in", 2);
    with.source_text = Some("def f():\n    return 1\n".into());
    store.insert_record(&without).unwrap();
    store.insert_record(&with).unwrap();
    let c = Connection::open(&path).unwrap();
    let stored: Vec<(String, Option<String>)> = c
        .prepare("SELECT id, source_text FROM records ORDER BY id")
        .unwrap()
        .query_map([], |r| Ok((r.get(0)?, r.get(1)?)))
        .unwrap()
        .map(Result::unwrap)
        .collect();
    assert_eq!(
        stored,
        vec![
            ("opted-in".to_string(), with.source_text.clone()),
            ("plain".to_string(), None),
        ]
    );
    // No code hides in the JSON body of the plain record either.
    let body: String = c
        .query_row("SELECT body FROM records WHERE id = 'plain'", [], |r| {
            r.get(0)
        })
        .unwrap();
    assert!(!body.contains("return 1"));
    assert_eq!(store.get_record("opted-in").unwrap(), Some(with));
    assert_eq!(store.counts().unwrap().records_with_source, 1);
    assert_eq!(store.forget_source_text().unwrap(), 1);
    assert_eq!(store.counts().unwrap().records_with_source, 0);
}

#[test]
fn storing_an_id_twice_keeps_the_first_version() {
    let (_dir, path) = temp_db();
    let store = open(&path);
    let first = record("same", 10);
    let mut second = record("same", 20);
    second.model = "other".into();
    assert!(store.insert_record(&first).unwrap());
    assert!(!store.insert_record(&second).unwrap());
    assert_eq!(store.get_record("same").unwrap(), Some(first));
    assert_eq!(
        store
            .insert_records(&[record("a", 1), record("same", 3), record("b", 2)])
            .unwrap(),
        2
    );
    assert_eq!(store.counts().unwrap().records, 3);
}

#[test]
fn records_the_store_cannot_represent_are_refused_with_a_reason() {
    let (_dir, path) = temp_db();
    let store = open(&path);
    let mut nan = record("nan", 1);
    nan.scores.insert("call_fabrication".into(), f64::NAN);
    let mut inf = record("inf", 1);
    inf.instability = f64::INFINITY;
    let empty = record("  ", 1);
    for (r, needle) in [
        (&nan, "call_fabrication"),
        (&inf, "instability"),
        (&empty, "id is empty"),
    ] {
        let err = store.insert_record(r).unwrap_err();
        assert!(matches!(err, StoreError::InvalidRecord { .. }), "{err:?}");
        assert!(err.to_string().contains(needle), "{err}");
    }
    // A batch with one bad record stores nothing.
    assert!(store.insert_records(&[record("ok", 1), nan]).is_err());
    assert_eq!(store.counts().unwrap().records, 0);
    // Through the RecordSink trait the reason comes back as text.
    assert!(RecordSink::record(&store, &inf)
        .unwrap_err()
        .contains("instability"));
}

#[test]
fn filters_select_by_time_task_language_and_model_in_time_order() {
    let (_dir, path) = temp_db();
    let store = open(&path);
    let mut rs = Vec::new();
    for (i, (task, lang, model)) in [
        ("ast", "python", "m1"),
        ("cfg", "java", "m1"),
        ("ast", "java", "m2"),
        ("ast", "python", "m2"),
    ]
    .iter()
    .enumerate()
    {
        let mut r = record(&format!("r{i}"), 100 - i as i64 * 10);
        r.task = task.to_string();
        r.language = lang.to_string();
        r.model = model.to_string();
        rs.push(r);
    }
    store.insert_records(&rs).unwrap();
    let ids = |f: RecordFilter| -> Vec<String> {
        store
            .records(&f)
            .unwrap()
            .into_iter()
            .map(|r| r.id)
            .collect()
    };
    assert_eq!(ids(RecordFilter::default()), ["r3", "r2", "r1", "r0"]);
    assert_eq!(
        ids(RecordFilter {
            since: Some(80),
            ..Default::default()
        }),
        ["r2", "r1", "r0"]
    );
    assert_eq!(
        ids(RecordFilter {
            task: Some("ast".into()),
            language: Some("java".into()),
            ..Default::default()
        }),
        ["r2"]
    );
    assert_eq!(
        ids(RecordFilter {
            model: Some("m2".into()),
            since: Some(75),
            ..Default::default()
        }),
        ["r2"]
    );
    assert_eq!(
        store.score_names(&RecordFilter::default()).unwrap(),
        ["keyword_gap", "statement_gap"]
    );
}

#[test]
fn id_prefixes_match_literally() {
    let (_dir, path) = temp_db();
    let store = open(&path);
    for id in ["abc123", "abd456", "a%c", "a_c"] {
        store.insert_record(&record(id, 1)).unwrap();
    }
    assert_eq!(store.record_ids_with_prefix("abc", 5).unwrap(), ["abc123"]);
    assert_eq!(store.record_ids_with_prefix("ab", 5).unwrap().len(), 2);
    assert_eq!(store.record_ids_with_prefix("a%", 5).unwrap(), ["a%c"]);
    assert_eq!(store.record_ids_with_prefix("a_", 5).unwrap(), ["a_c"]);
    assert!(store.record_ids_with_prefix("zz", 5).unwrap().is_empty());
}

#[test]
fn labels_keep_history_deduplicate_and_the_latest_counts() {
    let (_dir, path) = temp_db();
    let store = open(&path);
    assert!(store.add_label(&label("r1", false, 10, None)).unwrap());
    assert!(store
        .add_label(&label("r1", true, 20, Some("fixed prompt")))
        .unwrap());
    // Identical labels (an empty note is no note) are stored once.
    assert!(!store.add_label(&label("r1", false, 10, None)).unwrap());
    assert!(!store.add_label(&label("r1", false, 10, Some(""))).unwrap());
    // Same time, other verdict: a different label.
    assert!(store.add_label(&label("r2", true, 5, None)).unwrap());
    assert!(store.add_label(&label("r2", false, 5, None)).unwrap());
    assert_eq!(
        store.labels_for("r1").unwrap(),
        vec![
            label("r1", false, 10, None),
            label("r1", true, 20, Some("fixed prompt"))
        ]
    );
    let latest = store.latest_labels().unwrap();
    assert!(latest["r1"].correct);
    // Tie on time: the one stored last wins.
    assert!(!latest["r2"].correct);
    assert_eq!(store.labels(Some(10)).unwrap().len(), 2);
    assert!(RecordSink::label(&store, &label("fp:1", true, 1, None)).is_ok());
    assert_eq!(store.counts().unwrap().labels, 5);
}

fn config(retention: Retention) -> StoreConfig {
    StoreConfig {
        retention,
        ..StoreConfig::default()
    }
}

#[test]
fn prune_applies_record_label_and_cache_ages_relative_to_now() {
    let (_dir, path) = temp_db();
    let now = 1_000 * DAY;
    let clock = std::sync::Arc::new(std::sync::atomic::AtomicI64::new(now - 100 * DAY));
    let c2 = clock.clone();
    let store = Store::open(
        &path,
        config(Retention {
            record_max_age_days: Some(180),
            max_records: None,
            label_max_age_days: Some(730),
            cache_max_age_days: Some(90),
            cache_max_bytes: None,
        }),
    )
    .unwrap()
    .with_clock(move || c2.load(std::sync::atomic::Ordering::SeqCst));
    store
        .insert_record(&record("old", now - 181 * DAY))
        .unwrap();
    store
        .insert_record(&record("edge", now - 180 * DAY))
        .unwrap();
    store.insert_record(&record("new", now - DAY)).unwrap();
    store
        .add_label(&label("old", true, now - 731 * DAY, None))
        .unwrap();
    store
        .add_label(&label("new", true, now - 10 * DAY, None))
        .unwrap();
    store.cache_put("stale", "v").unwrap(); // last used 100 days ago
    clock.store(now - 5 * DAY, std::sync::atomic::Ordering::SeqCst);
    store.cache_put("fresh", "v").unwrap();

    let report = store.prune(now).unwrap();
    assert_eq!(report.records_expired, 1);
    assert_eq!(report.labels_expired, 1);
    assert_eq!(report.cache_expired, 1);
    let ids: Vec<String> = store
        .records(&RecordFilter::default())
        .unwrap()
        .into_iter()
        .map(|r| r.id)
        .collect();
    assert_eq!(ids, ["edge", "new"]);
    assert_eq!(store.cache_get("stale").unwrap(), None);
    assert_eq!(store.cache_get("fresh").unwrap().as_deref(), Some("v"));
    // Pruning again at the same time removes nothing more.
    let again = store.prune(now).unwrap();
    assert_eq!(
        (
            again.records_expired,
            again.labels_expired,
            again.cache_expired
        ),
        (0, 0, 0)
    );
}

#[test]
fn prune_keeps_the_newest_records_up_to_the_count_limit() {
    let (_dir, path) = temp_db();
    let store = Store::open(
        &path,
        config(Retention {
            record_max_age_days: None,
            max_records: Some(3),
            ..Retention::default()
        }),
    )
    .unwrap();
    for i in 0..6 {
        store.insert_record(&record(&format!("r{i}"), i)).unwrap();
    }
    assert_eq!(store.prune(100).unwrap().records_over_limit, 3);
    let ids: Vec<String> = store
        .records(&RecordFilter::default())
        .unwrap()
        .into_iter()
        .map(|r| r.id)
        .collect();
    assert_eq!(ids, ["r3", "r4", "r5"]);
}

#[test]
fn the_cache_round_trips_and_evicts_least_recently_used_first() {
    let (_dir, path) = temp_db();
    let clock = std::sync::Arc::new(std::sync::atomic::AtomicI64::new(1_000));
    let c2 = clock.clone();
    let tick = move || c2.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
    let store = Store::open(
        &path,
        config(Retention {
            cache_max_bytes: Some(300),
            cache_max_age_days: None,
            ..Retention::default()
        }),
    )
    .unwrap()
    .with_clock(tick);
    let value = "x".repeat(98); // key (2 bytes) + value = 100 bytes
    for key in ["k1", "k2", "k3", "k4"] {
        store.cache_put(key, &value).unwrap();
    }
    assert_eq!(store.cache_size().unwrap(), (4, 400));
    // Using k1 makes k2 the least recently used.
    assert!(store.cache_get("k1").unwrap().is_some());
    let report = store
        .prune(clock.load(std::sync::atomic::Ordering::SeqCst))
        .unwrap();
    assert_eq!(report.cache_evicted, 1);
    assert_eq!(report.cache_bytes, 300);
    assert_eq!(store.cache_get("k2").unwrap(), None);
    for key in ["k1", "k3", "k4"] {
        assert!(store.cache_get(key).unwrap().is_some(), "{key} evicted");
    }
    // Replacing a value updates its size; the CacheBackend trait sees the same cache.
    CacheBackend::put(&store, "k1", "short");
    assert_eq!(CacheBackend::get(&store, "k1").as_deref(), Some("short"));
    assert_eq!(CacheBackend::get(&store, "nope"), None);
    assert_eq!(store.cache_size().unwrap(), (3, 207));
}

#[test]
fn the_cache_stays_bounded_without_an_explicit_prune() {
    let (_dir, path) = temp_db();
    let store = Store::open(
        &path,
        config(Retention {
            cache_max_bytes: Some(10_000),
            ..Retention::default()
        }),
    )
    .unwrap();
    let value = "v".repeat(996);
    for i in 0..1_000 {
        store.cache_put(&format!("{i:04}"), &value).unwrap();
    }
    let (_, bytes) = store.cache_size().unwrap();
    // Checked every 64 puts: at most 63 puts (63,000 bytes) over the limit.
    assert!(bytes <= 10_000 + 63 * 1_000, "cache grew to {bytes} bytes");
}

#[test]
fn threads_sharing_one_store_and_threads_with_their_own_stores_lose_nothing() {
    let (_dir, path) = temp_db();
    let shared = std::sync::Arc::new(open(&path));
    let mut handles = Vec::new();
    for t in 0..4 {
        let shared = shared.clone();
        let path = path.clone();
        handles.push(std::thread::spawn(move || {
            let own = open(&path);
            for i in 0..100 {
                let target: &Store = if i % 2 == 0 { &shared } else { &own };
                target
                    .insert_record(&record(&format!("t{t}-{i}"), i))
                    .unwrap();
                target
                    .add_label(&label(&format!("t{t}-{i}"), i % 3 == 0, i, None))
                    .unwrap();
                target.cache_put(&format!("t{t}-{i}"), "answer").unwrap();
            }
        }));
    }
    for h in handles {
        h.join().unwrap();
    }
    let counts = shared.counts().unwrap();
    assert_eq!(
        (counts.records, counts.labels, counts.cache_entries),
        (400, 400, 400)
    );
    assert_eq!(shared.integrity_check().unwrap(), ["ok"]);
    let got: BTreeMap<String, bool> = shared
        .latest_labels()
        .unwrap()
        .into_iter()
        .map(|(k, l)| (k, l.correct))
        .collect();
    assert!(got["t3-99"]);
    assert!(!got["t0-1"]);
}
