//! Several processes writing one store: two `crosscheck telemetry import` processes commit
//! thousands of records each, one record per transaction, and one of them is killed with
//! SIGKILL midway. The database must pass `PRAGMA integrity_check` and hold every record
//! either process reported committed (`import` prints an id only after its commit).

use crate::store_support;

use std::collections::BTreeSet;
use std::io::{BufRead, BufReader, Read};
use std::path::Path;
use std::process::{Child, Command, ExitStatus, Stdio};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use rusqlite::Connection;
use store_support::{bin, record, write_jsonl};

const DEADLINE: Duration = Duration::from_secs(300);

/// A running import: the child, a thread collecting the ids it prints, and a live count.
struct Importer {
    child: Child,
    ids: JoinHandle<Vec<String>>,
    stderr: JoinHandle<String>,
    reported: Arc<AtomicUsize>,
}

fn start_import(db: &Path, file: &Path) -> Importer {
    let mut child = Command::new(bin())
        .args(["telemetry", "--db"])
        .arg(db)
        .arg("import")
        .arg(file)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawn crosscheck");
    let stdout = child.stdout.take().unwrap();
    let mut stderr = child.stderr.take().unwrap();
    let reported = Arc::new(AtomicUsize::new(0));
    let counter = reported.clone();
    let ids = std::thread::spawn(move || {
        let mut ids = Vec::new();
        // Only complete lines count: a line cut by the kill was not fully reported.
        let mut reader = BufReader::new(stdout);
        let mut line = String::new();
        while reader.read_line(&mut line).unwrap_or(0) > 0 {
            if let Some(id) = line.strip_suffix('\n') {
                ids.push(id.to_string());
                counter.fetch_add(1, Ordering::SeqCst);
            }
            line.clear();
        }
        ids
    });
    let stderr = std::thread::spawn(move || {
        let mut s = String::new();
        stderr.read_to_string(&mut s).ok();
        s
    });
    Importer {
        child,
        ids,
        stderr,
        reported,
    }
}

fn wait_with_deadline(child: &mut Child, start: Instant) -> ExitStatus {
    loop {
        if let Some(status) = child.try_wait().expect("wait") {
            return status;
        }
        if start.elapsed() > DEADLINE {
            child.kill().ok();
            child.wait().ok();
            panic!("an import did not finish within {DEADLINE:?}");
        }
        std::thread::sleep(Duration::from_millis(10));
    }
}

fn write_export(dir: &Path, prefix: &str, n: usize) -> (std::path::PathBuf, Vec<String>) {
    let records: Vec<_> = (0..n)
        .map(|i| {
            let mut r = record(&format!("{prefix}-{i:05}"), 1_700_000_000 + i as i64);
            r.model = format!("model-{prefix}");
            r
        })
        .collect();
    let path = dir.join(format!("{prefix}.jsonl"));
    write_jsonl(&path, &records);
    (path, records.into_iter().map(|r| r.id).collect())
}

fn stored_ids(db: &Path) -> BTreeSet<String> {
    let c = Connection::open(db).unwrap();
    let mut stmt = c.prepare("SELECT id FROM records").unwrap();
    let rows = stmt.query_map([], |r| r.get::<_, String>(0)).unwrap();
    rows.map(Result::unwrap).collect()
}

fn integrity(db: &Path) -> String {
    let c = Connection::open(db).unwrap();
    c.query_row("PRAGMA integrity_check", [], |r| r.get(0))
        .unwrap()
}

#[test]
fn sigkill_of_one_of_two_concurrent_importers_loses_no_committed_record() {
    const N: usize = 3_000;
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("data").join("crosscheck.db");
    let (file_a, ids_a) = write_export(dir.path(), "a", N);
    let (file_b, ids_b) = write_export(dir.path(), "b", N);

    // Both start on a store that does not exist yet: they also race to create and migrate it.
    let start = Instant::now();
    let mut a = start_import(&db, &file_a);
    let mut b = start_import(&db, &file_b);

    // Kill A once it has committed a third of its records and B is writing too.
    while a.reported.load(Ordering::SeqCst) < N / 3 || b.reported.load(Ordering::SeqCst) == 0 {
        if let Some(status) = a.child.try_wait().unwrap() {
            panic!("importer A ended before the kill: {status}");
        }
        assert!(start.elapsed() < DEADLINE, "importers made no progress");
        std::thread::sleep(Duration::from_millis(1));
    }
    a.child.kill().expect("SIGKILL importer A"); // std sends SIGKILL on Unix
    let status_a = a.child.wait().unwrap();
    #[cfg(unix)]
    {
        use std::os::unix::process::ExitStatusExt;
        assert_eq!(status_a.signal(), Some(9), "A should die of SIGKILL");
    }
    let reported_a = a.ids.join().unwrap();
    a.stderr.join().unwrap();

    let status_b = wait_with_deadline(&mut b.child, start);
    let reported_b = b.ids.join().unwrap();
    let stderr_b = b.stderr.join().unwrap();
    assert!(
        status_b.success(),
        "importer B failed: {status_b}\n{stderr_b}"
    );

    assert!(
        reported_a.len() >= N / 3 && reported_a.len() < N,
        "A was not killed midway: it reported {} of {N}",
        reported_a.len()
    );
    assert_eq!(reported_b, ids_b, "B reports every record, in file order");

    assert_eq!(integrity(&db), "ok");
    let stored = stored_ids(&db);
    let lost: Vec<&String> = reported_a
        .iter()
        .chain(&reported_b)
        .filter(|id| !stored.contains(*id))
        .collect();
    assert!(lost.is_empty(), "committed records lost: {lost:?}");
    let known: BTreeSet<&String> = ids_a.iter().chain(&ids_b).collect();
    assert!(stored.iter().all(|id| known.contains(id)));
    // A may have committed one record it had no time to report, never more.
    let stored_a = stored.iter().filter(|id| id.starts_with("a-")).count();
    assert!(
        stored_a == reported_a.len() || stored_a == reported_a.len() + 1,
        "A reported {} but {stored_a} are stored",
        reported_a.len()
    );

    eprintln!(
        "A killed after reporting {} of {N} ({stored_a} stored); B committed {N}; {:?}",
        reported_a.len(),
        start.elapsed()
    );

    // The store is usable after the crash: re-importing A adds exactly what is missing.
    let mut again = start_import(&db, &file_a);
    let status = wait_with_deadline(&mut again.child, Instant::now());
    assert!(status.success());
    let added = again.ids.join().unwrap();
    again.stderr.join().unwrap();
    assert_eq!(added.len(), N - stored_a);
    assert_eq!(stored_ids(&db).len(), 2 * N);
    assert_eq!(integrity(&db), "ok");
}

#[test]
fn two_concurrent_importers_both_complete_and_a_rerun_adds_nothing() {
    const N: usize = 1_000;
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("crosscheck.db");
    let (file_a, ids_a) = write_export(dir.path(), "a", N);
    let (file_b, ids_b) = write_export(dir.path(), "b", N);
    let start = Instant::now();
    let mut a = start_import(&db, &file_a);
    let mut b = start_import(&db, &file_b);
    for imp in [&mut a, &mut b] {
        let status = wait_with_deadline(&mut imp.child, start);
        assert!(status.success(), "import failed: {status}");
    }
    assert_eq!(a.ids.join().unwrap(), ids_a);
    assert_eq!(b.ids.join().unwrap(), ids_b);
    let stderr = a.stderr.join().unwrap();
    assert!(
        stderr.contains("1000 new record(s), 0 already present"),
        "{stderr}"
    );
    b.stderr.join().unwrap();
    assert_eq!(stored_ids(&db).len(), 2 * N);
    assert_eq!(integrity(&db), "ok");

    let mut rerun = start_import(&db, &file_b);
    assert!(wait_with_deadline(&mut rerun.child, Instant::now()).success());
    assert!(
        rerun.ids.join().unwrap().is_empty(),
        "a rerun commits nothing new"
    );
    let stderr = rerun.stderr.join().unwrap();
    assert!(
        stderr.contains("0 new record(s), 1000 already present"),
        "{stderr}"
    );
}
