//! The store's schema: migrations from every older version, refusal of newer and foreign
//! databases, rollback of a failing migration, clear errors for files that are not stores, and
//! the default path.

use crate::store_support;

use std::path::Path;

use crosscheck::store::schema::{self, Migration, MIGRATIONS};
use crosscheck::store::{
    resolve_db_path, Store, StoreConfig, StoreError, APPLICATION_ID, SCHEMA_VERSION,
};
use rusqlite::Connection;
use store_support::{open, record, temp_db};

fn user_version(path: &Path) -> u32 {
    let c = Connection::open(path).unwrap();
    c.query_row("PRAGMA user_version", [], |r| r.get(0))
        .unwrap()
}

/// Every schema object's SQL, sorted: the shape of a store.
fn schema_sql(path: &Path) -> Vec<String> {
    let c = Connection::open(path).unwrap();
    let mut stmt = c
        .prepare("SELECT type || ' ' || name || ': ' || coalesce(sql, '') FROM sqlite_schema ORDER BY type, name")
        .unwrap();
    let rows = stmt.query_map([], |r| r.get(0)).unwrap();
    rows.map(Result::unwrap).collect()
}

#[test]
fn a_new_store_is_at_the_current_version_with_every_table() {
    let (_dir, path) = temp_db();
    let store = open(&path);
    assert_eq!(store.schema_version().unwrap(), SCHEMA_VERSION);
    assert_eq!(SCHEMA_VERSION as usize, MIGRATIONS.len());
    let sql = schema_sql(&path).join("\n");
    for table in ["table records", "table labels", "table llm_cache"] {
        assert!(sql.contains(table), "{table} missing from\n{sql}");
    }
    // Indexed columns: task (leading the group index), language, model, timestamp, tier, pass.
    for index in [
        "ON records(task, language, model)",
        "ON records(language)",
        "ON records(model)",
        "ON records(timestamp)",
        "ON records(tier)",
        "ON records(pass)",
    ] {
        assert!(sql.contains(index), "no index {index} in\n{sql}");
    }
    let c = Connection::open(&path).unwrap();
    let app: i32 = c
        .query_row("PRAGMA application_id", [], |r| r.get(0))
        .unwrap();
    assert_eq!(app, APPLICATION_ID);
    let mode: String = c
        .query_row("PRAGMA journal_mode", [], |r| r.get(0))
        .unwrap();
    assert_eq!(mode, "wal");
    let vacuum: i64 = c.query_row("PRAGMA auto_vacuum", [], |r| r.get(0)).unwrap();
    assert_eq!(vacuum, 2, "auto_vacuum should be INCREMENTAL");
}

#[test]
fn migrates_from_every_older_version_and_keeps_the_data() {
    let (fresh_dir, fresh) = temp_db();
    drop(open(&fresh));
    let expected = schema_sql(&fresh);
    drop(fresh_dir);
    for from in 0..SCHEMA_VERSION {
        let (_dir, path) = temp_db();
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        {
            let mut c = Connection::open(&path).unwrap();
            let reached = schema::migrate(&mut c, &path, &MIGRATIONS[..from as usize]).unwrap();
            assert_eq!(reached, from);
            if from >= 1 {
                // A record and a label written by a version-1 store.
                c.execute(
                    "INSERT INTO records (id, timestamp, task, language, model, tier, pass, body) \
                     VALUES ('old', 10, 'ast', 'c', 'm', 'confirmed', 1, ?1)",
                    [serde_json::json!({
                        "template_id": "t", "template_version": 1, "strategy": "normal",
                        "code_hash": "h", "analyzer": null, "samples": [], "scores": {"s": 0.5},
                        "instability": 0.0, "latency_ms": 5, "prompt_tokens": 1,
                        "completion_tokens": 2
                    })
                    .to_string()],
                )
                .unwrap();
                c.execute(
                    "INSERT INTO labels (subject, correct, timestamp) VALUES ('old', 1, 11)",
                    [],
                )
                .unwrap();
            }
        }
        assert_eq!(user_version(&path), from);
        let store = open(&path);
        assert_eq!(
            store.schema_version().unwrap(),
            SCHEMA_VERSION,
            "from {from}"
        );
        assert_eq!(
            schema_sql(&path),
            expected,
            "schema after migrating from {from}"
        );
        if from >= 1 {
            let old = store.get_record("old").unwrap().expect("record kept");
            assert_eq!(old.language, "c");
            assert_eq!(old.scores.get("s"), Some(&0.5));
            assert_eq!(store.labels_for("old").unwrap().len(), 1);
        }
        // The migrated store works: the cache (version 2) too.
        store.cache_put("k", "v").unwrap();
        assert_eq!(store.cache_get("k").unwrap().as_deref(), Some("v"));
    }
}

#[test]
fn refuses_a_newer_schema_and_leaves_it_untouched() {
    let (_dir, path) = temp_db();
    drop(open(&path));
    Connection::open(&path)
        .unwrap()
        .pragma_update(None, "user_version", SCHEMA_VERSION + 5)
        .unwrap();
    let err = Store::open(&path, StoreConfig::default()).unwrap_err();
    match &err {
        StoreError::NewerSchema {
            found, supported, ..
        } => {
            assert_eq!(*found, SCHEMA_VERSION + 5);
            assert_eq!(*supported, SCHEMA_VERSION);
        }
        other => panic!("expected NewerSchema, got {other:?}"),
    }
    let message = err.to_string();
    assert!(
        message.contains("newer than this crosscheck supports"),
        "{message}"
    );
    assert!(message.contains(&path.display().to_string()), "{message}");
    assert_eq!(user_version(&path), SCHEMA_VERSION + 5);
}

#[test]
fn a_failing_migration_is_rolled_back_whole() {
    let (_dir, path) = temp_db();
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    let broken = [
        MIGRATIONS[0],
        Migration {
            version: 2,
            description: "broken step",
            sql: "CREATE TABLE half_done (x INTEGER); SELECT no_such_column FROM records;",
        },
    ];
    let mut c = Connection::open(&path).unwrap();
    let err = schema::migrate(&mut c, &path, &broken).unwrap_err();
    match &err {
        StoreError::Migration { from, to, .. } => assert_eq!((*from, *to), (1, 2)),
        other => panic!("expected Migration, got {other:?}"),
    }
    assert!(err.to_string().contains("broken step"), "{err}");
    drop(c);
    assert_eq!(user_version(&path), 1);
    assert!(!schema_sql(&path).iter().any(|s| s.contains("half_done")));
    // The real migrations then take it the rest of the way.
    assert_eq!(open(&path).schema_version().unwrap(), SCHEMA_VERSION);
}

#[test]
fn migration_versions_must_be_contiguous() {
    let (_dir, path) = temp_db();
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    let gap = [Migration {
        version: 2,
        description: "skips 1",
        sql: "CREATE TABLE t (x INTEGER);",
    }];
    let mut c = Connection::open(&path).unwrap();
    assert!(matches!(
        schema::migrate(&mut c, &path, &gap),
        Err(StoreError::Migration { .. })
    ));
    assert_eq!(user_version(&path), 0);
}

#[test]
fn refuses_another_applications_database() {
    let (_dir, path) = temp_db();
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    Connection::open(&path)
        .unwrap()
        .execute_batch("CREATE TABLE photos (id INTEGER); INSERT INTO photos VALUES (1);")
        .unwrap();
    let err = Store::open(&path, StoreConfig::default()).unwrap_err();
    assert!(matches!(err, StoreError::Foreign { .. }), "{err:?}");
    assert!(err.to_string().contains("another application"), "{err}");
    let c = Connection::open(&path).unwrap();
    let n: i64 = c
        .query_row("SELECT count(*) FROM photos", [], |r| r.get(0))
        .unwrap();
    assert_eq!(n, 1);
    assert_eq!(user_version(&path), 0);

    let (_dir2, other) = temp_db();
    std::fs::create_dir_all(other.parent().unwrap()).unwrap();
    Connection::open(&other)
        .unwrap()
        .pragma_update(None, "application_id", 0x1234)
        .unwrap();
    let err = Store::open(&other, StoreConfig::default()).unwrap_err();
    assert!(matches!(err, StoreError::Foreign { .. }), "{err:?}");
}

#[test]
fn a_file_that_is_not_a_database_is_a_clear_error_and_is_not_modified() {
    let (_dir, path) = temp_db();
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    let junk = "this is a text file, not a database\n".repeat(200);
    std::fs::write(&path, &junk).unwrap();
    let err = Store::open(&path, StoreConfig::default()).unwrap_err();
    assert!(matches!(err, StoreError::NotADatabase { .. }), "{err:?}");
    let message = err.to_string();
    assert!(
        message.contains("not a readable SQLite database"),
        "{message}"
    );
    assert!(message.contains(&path.display().to_string()), "{message}");
    assert_eq!(std::fs::read_to_string(&path).unwrap(), junk);
    assert!(Store::open_optional(Ok(path.clone()), StoreConfig::default()).is_none());
}

#[test]
fn a_damaged_database_is_an_error_not_a_crash() {
    let (_dir, path) = temp_db();
    {
        let store = open(&path);
        for i in 0..50 {
            store.insert_record(&record(&format!("r{i}"), i)).unwrap();
        }
    }
    // Keep the 100-byte header, overwrite the schema page and the next ones.
    let mut bytes = std::fs::read(&path).unwrap();
    let end = bytes.len().min(4096 * 3);
    for (i, b) in bytes[100..end].iter_mut().enumerate() {
        *b = (i * 7 + 13) as u8;
    }
    std::fs::write(&path, &bytes).unwrap();
    match Store::open(&path, StoreConfig::default()) {
        Err(e) => assert!(
            matches!(e, StoreError::NotADatabase { .. }),
            "unexpected error {e:?}"
        ),
        Ok(store) => {
            // Opened (SQLite reads pages lazily): every read must fail cleanly.
            assert!(store.records(&Default::default()).is_err());
        }
    }
}

#[test]
fn unusable_paths_are_clear_errors() {
    let dir = tempfile::tempdir().unwrap();
    let err = Store::open(dir.path(), StoreConfig::default()).unwrap_err();
    assert!(matches!(err, StoreError::Open { .. }), "{err:?}");
    assert!(err.to_string().contains("is a directory"), "{err}");

    let file = dir.path().join("plain-file");
    std::fs::write(&file, "x").unwrap();
    let err = Store::open(&file.join("crosscheck.db"), StoreConfig::default()).unwrap_err();
    assert!(matches!(err, StoreError::Open { .. }), "{err:?}");
    assert!(err.to_string().contains("is not a directory"), "{err}");
}

#[cfg(unix)]
#[test]
fn new_directories_and_files_are_private() {
    use std::os::unix::fs::PermissionsExt;
    let (_dir, path) = temp_db();
    drop(open(&path));
    let file_mode = std::fs::metadata(&path).unwrap().permissions().mode() & 0o777;
    let dir_mode = std::fs::metadata(path.parent().unwrap())
        .unwrap()
        .permissions()
        .mode()
        & 0o777;
    assert_eq!(file_mode, 0o600);
    assert_eq!(dir_mode, 0o700);
}

#[test]
fn many_first_opens_at_once_migrate_exactly_once() {
    let (_dir, path) = temp_db();
    let handles: Vec<_> = (0..8)
        .map(|_| {
            let path = path.clone();
            std::thread::spawn(move || {
                Store::open(&path, StoreConfig::default()).map(|s| s.schema_version().unwrap())
            })
        })
        .collect();
    for h in handles {
        assert_eq!(h.join().unwrap().unwrap(), SCHEMA_VERSION);
    }
    assert_eq!(user_version(&path), SCHEMA_VERSION);
}

#[test]
fn default_path_follows_crosscheck_then_xdg_then_home() {
    fn env<'a>(pairs: &'a [(&'a str, &'a str)]) -> impl Fn(&str) -> Option<String> + 'a {
        move |name: &str| {
            pairs
                .iter()
                .find(|(k, _)| *k == name)
                .map(|(_, v)| v.to_string())
        }
    }
    let all = [
        ("CROSSCHECK_DATA_DIR", "/data/xc"),
        ("XDG_DATA_HOME", "/home/u/.data"),
        ("HOME", "/home/u"),
    ];
    assert_eq!(
        resolve_db_path(env(&all)).unwrap(),
        Path::new("/data/xc/crosscheck.db")
    );
    assert_eq!(
        resolve_db_path(env(&all[1..])).unwrap(),
        Path::new("/home/u/.data/crosscheck/crosscheck.db")
    );
    assert_eq!(
        resolve_db_path(env(&all[2..])).unwrap(),
        Path::new("/home/u/.local/share/crosscheck/crosscheck.db")
    );
    // Empty values are unset; a relative XDG_DATA_HOME is invalid per the XDG spec.
    assert_eq!(
        resolve_db_path(env(&[
            ("CROSSCHECK_DATA_DIR", ""),
            ("XDG_DATA_HOME", "relative/dir"),
            ("HOME", "/h"),
        ]))
        .unwrap(),
        Path::new("/h/.local/share/crosscheck/crosscheck.db")
    );
    assert!(matches!(
        resolve_db_path(env(&[])),
        Err(StoreError::NoDataDir)
    ));
}
