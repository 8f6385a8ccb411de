//! Background work at a lower CPU priority than the documents.
//!
//! The workspace analysis (call graph and taint over every file of a language family) and
//! indexing (reading and parsing the workspace) run on threads of their own whose scheduling
//! priority is lowered (Linux: `nice` 10, which Linux keeps per thread). A document analysis
//! started by an edit then gets the cores first while a background run is still going or winding
//! down after its cancellation. The threads are not from tokio's blocking pool: a pool
//! thread, once lowered, could not be raised again by an unprivileged process and would slow
//! the next document analysis it ran.

use std::panic::{catch_unwind, AssertUnwindSafe};

/// Stack of a background thread (as deep as the server's runtime threads: analyses recurse).
const STACK_BYTES: usize = 32 * 1024 * 1024;

/// The `nice` value of background threads.
#[cfg(target_os = "linux")]
const NICE: i32 = 10;

/// Runs `f` on a thread of its own at a lower scheduling priority and returns its result;
/// `None` when no thread could be started or `f` panicked (the panic is logged).
pub async fn run_low_priority<F, R>(name: &str, f: F) -> Option<R>
where
    F: FnOnce() -> R + Send + 'static,
    R: Send + 'static,
{
    let (tx, rx) = tokio::sync::oneshot::channel();
    let what = name.to_string();
    let spawned = std::thread::Builder::new()
        .name(format!("crosscheck-{name}"))
        .stack_size(STACK_BYTES)
        .spawn(move || {
            lower_priority();
            let r = catch_unwind(AssertUnwindSafe(f));
            if r.is_err() {
                tracing::error!("background task {what} panicked");
            }
            let _ = tx.send(r.ok());
        });
    if let Err(e) = spawned {
        tracing::error!("cannot start background task {name}: {e}");
        return None;
    }
    rx.await.ok().flatten()
}

#[cfg(target_os = "linux")]
fn lower_priority() {
    // SAFETY: setpriority only reads its integer arguments; `who = 0` is the calling thread.
    let rc = unsafe { libc::setpriority(libc::PRIO_PROCESS, 0, NICE) };
    if rc != 0 {
        tracing::debug!("could not lower the priority of a background thread");
    }
}

#[cfg(not(target_os = "linux"))]
fn lower_priority() {}

/// How many malloc arenas the server's threads share (glibc's default is eight per core).
const MALLOC_ARENAS: i32 = 2;

/// Caps glibc's malloc arenas at [`MALLOC_ARENAS`] unless the user set `MALLOC_ARENA_MAX`.
/// Each thread that allocates while the others hold their arenas gets an arena of its own,
/// and memory freed in one arena serves only the threads that use it: the runtime's workers,
/// blocking threads and analysis threads each kept their own free memory. On 731k lines
/// (redis, wagtail, WebGoat; `crosscheck bench-lsp`) two arenas took the peak from 780 to
/// 724 MiB and the settled size from 622 to 580 MiB, edits as fast. Call before any thread
/// starts. Returns whether the cap was set.
pub fn limit_malloc_arenas() -> bool {
    if std::env::var_os("MALLOC_ARENA_MAX").is_some() {
        return false;
    }
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    // SAFETY: mallopt only sets an allocator parameter; M_ARENA_MAX takes a positive count.
    unsafe {
        libc::mallopt(libc::M_ARENA_MAX, MALLOC_ARENAS) == 1
    }
    #[cfg(not(all(target_os = "linux", target_env = "gnu")))]
    false
}

/// Returns the allocator's free pages to the system. glibc keeps memory freed in its arenas
/// mapped (only the top of a heap shrinks by itself), so after a workspace analysis the
/// server's resident size stayed at its peak: on 731k lines (redis, wagtail, WebGoat) 320 of
/// 1,265 MiB were freed memory. Called after each workspace run.
pub fn release_free_memory() {
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    // SAFETY: malloc_trim only walks the allocator's own arenas; 0 keeps no extra padding.
    unsafe {
        libc::malloc_trim(0);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn returns_the_result_and_survives_a_panic() {
        assert_eq!(run_low_priority("test", || 6 * 7).await, Some(42));
        let panicked: Option<()> = run_low_priority("test", || panic!("boom")).await;
        assert_eq!(panicked, None);
    }

    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    #[test]
    fn the_malloc_arena_cap_is_set_unless_the_user_chose_one() {
        // The test process's environment decides which branch runs; both are checked by
        // whichever applies (CI sets no MALLOC_ARENA_MAX).
        let user = std::env::var_os("MALLOC_ARENA_MAX").is_some();
        assert_eq!(limit_malloc_arenas(), !user);
    }

    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    #[test]
    fn freed_memory_goes_back_to_the_system() {
        fn rss_mib() -> u64 {
            let s = std::fs::read_to_string("/proc/self/status").unwrap();
            s.lines()
                .find_map(|l| l.strip_prefix("VmRSS:"))
                .and_then(|v| v.trim().trim_end_matches("kB").trim().parse::<u64>().ok())
                .unwrap()
                / 1024
        }
        // 256 MiB in 4 KiB blocks in a thread's own arena; every 16th block stays, so the
        // freed space lies between live blocks, where free() alone never returns it.
        let (before, after) = std::thread::spawn(|| {
            let blocks: Vec<Vec<u8>> = (0..65_536).map(|i| vec![i as u8; 4096]).collect();
            let kept: Vec<Vec<u8>> = blocks
                .into_iter()
                .enumerate()
                .filter(|(i, _)| i % 16 == 0)
                .map(|(_, b)| b)
                .collect();
            let before = rss_mib();
            release_free_memory();
            let after = rss_mib();
            assert_eq!(kept.len(), 4096);
            (before, after)
        })
        .join()
        .unwrap();
        assert!(
            before >= after + 100,
            "RSS {before} MiB before the release, {after} MiB after"
        );
    }

    #[cfg(target_os = "linux")]
    #[tokio::test]
    async fn the_thread_runs_niced_and_the_caller_does_not() {
        let inner = run_low_priority("test", || unsafe {
            libc::getpriority(libc::PRIO_PROCESS, 0)
        })
        .await;
        let outer = unsafe { libc::getpriority(libc::PRIO_PROCESS, 0) };
        assert_eq!(inner, Some(outer + NICE).map(|n| n.min(19)));
    }
}
