//! Running untrusted code: a separate process in a fresh temporary directory, with a scrubbed
//! environment (`env_clear`, then only `PATH`, `HOME` = the directory, `LANG` and the sanitizer
//! options), no network (`unshare -n`, or `unshare -rn` for unprivileged users, when the kernel
//! allows it; otherwise the code runs with the host's network and [`network_isolated`] reports
//! it), an address-space limit (`ulimit -v` through `sh -c`), no core dumps, and a wall-clock
//! timeout after which the process is killed. When crosscheck runs as root, the code under
//! test (and its compiler) runs as `nobody` through `setpriv`, in a directory handed to
//! `nobody`, with at most [`MAX_PROCESSES`] processes (`prlimit --nproc`, which does not bind root):
//! a mutant that forks in a loop cannot take the machine down. Without `setpriv` (or as a
//! non-root user) the process count is not limited.

use std::io::Read;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::OnceLock;
use std::time::{Duration, Instant};

/// Limits of one run.
#[derive(Debug, Clone, Copy)]
pub struct Limits {
    pub wall: Duration,
    pub memory_mb: u64,
}

/// What a run produced.
#[derive(Debug, Clone)]
pub struct RunOutput {
    pub stdout: String,
    pub stderr: String,
    /// Exit status, `None` when killed by a signal or the timeout.
    pub status: Option<i32>,
    pub timed_out: bool,
}

fn unshare_prefix() -> &'static [&'static str] {
    static PREFIX: OnceLock<Vec<&'static str>> = OnceLock::new();
    PREFIX.get_or_init(|| {
        for candidate in [vec!["unshare", "-n", "--"], vec!["unshare", "-rn", "--"]] {
            let ok = Command::new(candidate[0])
                .args(&candidate[1..])
                .arg("true")
                .stdin(Stdio::null())
                .stdout(Stdio::null())
                .stderr(Stdio::null())
                .status()
                .map(|s| s.success())
                .unwrap_or(false);
            if ok {
                return candidate;
            }
        }
        Vec::new()
    })
}

/// Process (and thread) limit of the unprivileged user the code runs as, when dropping from root.
pub const MAX_PROCESSES: u32 = 512;

const NOBODY: u32 = 65534;

/// `prlimit` + `setpriv` arguments that cap the process count and drop root to `nobody`, when
/// running as root and both tools work.
fn drop_prefix() -> &'static [String] {
    static PREFIX: OnceLock<Vec<String>> = OnceLock::new();
    PREFIX.get_or_init(|| {
        #[cfg(unix)]
        {
            use std::os::unix::fs::MetadataExt;
            let root = std::fs::metadata("/proc/self").is_ok_and(|m| m.uid() == 0);
            if !root {
                return Vec::new();
            }
            let prefix: Vec<String> = [
                "prlimit".to_string(),
                format!("--nproc={MAX_PROCESSES}:{MAX_PROCESSES}"),
                "setpriv".to_string(),
                format!("--reuid={NOBODY}"),
                format!("--regid={NOBODY}"),
                "--clear-groups".to_string(),
            ]
            .to_vec();
            let ok = Command::new(&prefix[0])
                .args(&prefix[1..])
                .arg("true")
                .stdin(Stdio::null())
                .stdout(Stdio::null())
                .stderr(Stdio::null())
                .status()
                .map(|s| s.success())
                .unwrap_or(false);
            if ok {
                return prefix;
            }
        }
        Vec::new()
    })
}

/// Whether the number of processes of the code under test is limited.
pub fn processes_limited() -> bool {
    !drop_prefix().is_empty()
}

/// Whether runs are cut off from the network.
pub fn network_isolated() -> bool {
    !unshare_prefix().is_empty()
}

/// A private temporary directory, removed on drop.
pub struct TempDir(PathBuf);

impl TempDir {
    pub fn new(tag: &str) -> std::io::Result<TempDir> {
        use std::sync::atomic::{AtomicU64, Ordering};
        static COUNTER: AtomicU64 = AtomicU64::new(0);
        let nanos = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map(|d| d.subsec_nanos())
            .unwrap_or(0);
        let n = COUNTER.fetch_add(1, Ordering::Relaxed);
        let dir = std::env::temp_dir().join(format!(
            "crosscheck-equiv-{}-{n}-{nanos}-{tag}",
            std::process::id()
        ));
        std::fs::create_dir(&dir)?;
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            let _ = std::fs::set_permissions(&dir, std::fs::Permissions::from_mode(0o700));
        }
        Ok(TempDir(dir))
    }
    pub fn path(&self) -> &Path {
        &self.0
    }
}

impl Drop for TempDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

fn host_path() -> String {
    std::env::var("PATH").unwrap_or_else(|_| "/usr/local/bin:/usr/bin:/bin".into())
}

/// `program` as a path: found on the host's `PATH` when it names no directory.
///
/// The standard library starts a child with `posix_spawn` only when the program is a path
/// (the environment sets `PATH`); otherwise it forks, and a fork runs every `pthread_atfork`
/// handler of the process. Z3's handler waits while a solver's timer is armed on another
/// thread, so `crosscheck mutants --jobs 2` spent minutes spinning in it.
fn resolve(program: &str) -> String {
    if program.contains('/') {
        return program.to_string();
    }
    for dir in std::env::split_paths(&host_path()) {
        let candidate = dir.join(program);
        if candidate.is_file() {
            return candidate.to_string_lossy().into_owned();
        }
    }
    program.to_string()
}

/// Runs `program args...` in `dir` under the sandbox.
pub fn run(
    program: &str,
    args: &[String],
    dir: &Path,
    limits: Limits,
) -> std::io::Result<RunOutput> {
    run_with(program, args, dir, limits, &Extra::default())
}

/// Kills every process of the process group `pgid` (the child made it with
/// `process_group(0)`, so its id is the child's). Never through `kill(1)`: procps-ng reads
/// `kill -KILL -12345` as `kill(-1, SIGKILL)`, every process the user may signal. Ids 0 and 1
/// (this process's own group, init) are refused.
pub(crate) fn kill_group(pgid: u32) -> bool {
    let Ok(id) = libc::pid_t::try_from(pgid) else {
        return false;
    };
    if id <= 1 {
        return false;
    }
    // SAFETY: killpg takes plain integers and touches no memory of ours.
    unsafe { libc::killpg(id, libc::SIGKILL) == 0 }
}

/// The resident memory of every process in process group `pgid`, in KB (Linux `/proc`;
/// 0 elsewhere).
fn group_rss_kb(pgid: u32) -> u64 {
    let Ok(entries) = std::fs::read_dir("/proc") else {
        return 0;
    };
    #[cfg(unix)]
    // SAFETY: sysconf only reads a configuration value.
    let page_kb = (unsafe { libc::sysconf(libc::_SC_PAGESIZE) }.max(4096) / 1024) as u64;
    #[cfg(not(unix))]
    let page_kb = 4u64;
    let mut total = 0u64;
    for e in entries.flatten() {
        let name = e.file_name();
        let Some(pid) = name
            .to_str()
            .filter(|n| n.bytes().all(|b| b.is_ascii_digit()))
        else {
            continue;
        };
        let Ok(stat) = std::fs::read_to_string(format!("/proc/{pid}/stat")) else {
            continue;
        };
        // Fields after the command name (which may hold spaces): state is field 3, the
        // process group field 5, the resident set (pages) field 24.
        let Some(rest) = stat.rsplit_once(')').map(|(_, r)| r) else {
            continue;
        };
        let fields: Vec<&str> = rest.split_whitespace().collect();
        if fields.get(2).and_then(|g| g.parse::<u32>().ok()) != Some(pgid) {
            continue;
        }
        let pages = fields
            .get(21)
            .and_then(|r| r.parse::<u64>().ok())
            .unwrap_or(0);
        total += pages * page_kb;
    }
    total
}

/// More ways to run: standard input, and a memory limit fit for AddressSanitizer.
#[derive(Debug, Clone, Default)]
pub struct Extra<'a> {
    /// Bytes fed to standard input (otherwise it is empty).
    pub stdin: Option<&'a [u8]>,
    /// The program is built with AddressSanitizer, which reserves terabytes of address space:
    /// no `ulimit -v`; the limit is ASan's own `hard_rss_limit_mb` instead.
    pub asan: bool,
}

/// Exit status of a program stopped by AddressSanitizer (see [`run_with`]).
pub const ASAN_EXIT: i32 = 87;

/// [`run`] with [`Extra`] options.
pub fn run_with(
    program: &str,
    args: &[String],
    dir: &Path,
    limits: Limits,
    extra: &Extra<'_>,
) -> std::io::Result<RunOutput> {
    let prefix = unshare_prefix();
    let memory_kb = limits.memory_mb.saturating_mul(1024).to_string();
    let mut argv: Vec<String> = prefix.iter().map(|s| s.to_string()).collect();
    let drop = drop_prefix();
    if !drop.is_empty() {
        #[cfg(unix)]
        {
            // The compiler and the code under test write their files here as `nobody`.
            let _ = std::os::unix::fs::chown(dir, Some(NOBODY), Some(NOBODY));
        }
        argv.extend(drop.iter().cloned());
    }
    argv.extend([
        "sh".to_string(),
        "-c".to_string(),
        if extra.asan {
            "ulimit -c 0; exec \"$@\"".to_string()
        } else {
            "ulimit -c 0; ulimit -v \"$0\" 2>/dev/null; exec \"$@\"".to_string()
        },
        memory_kb,
        program.to_string(),
    ]);
    argv.extend(args.iter().cloned());
    let mut cmd = Command::new(resolve(&argv[0]));
    cmd.args(&argv[1..])
        .current_dir(dir)
        .env_clear()
        .env("PATH", host_path())
        .env("HOME", dir)
        .env("TMPDIR", dir)
        .env("LANG", "C.UTF-8")
        .env("PYTHONHASHSEED", "0")
        .env("PYTHONDONTWRITEBYTECODE", "1")
        .env("PYTHONIOENCODING", "utf-8")
        .env(
            "UBSAN_OPTIONS",
            "halt_on_error=1:exitcode=86:print_stacktrace=0:abort_on_error=0",
        )
        .env(
            "ASAN_OPTIONS",
            format!(
                "exitcode={ASAN_EXIT}:detect_leaks=0:hard_rss_limit_mb={}:allocator_may_return_null=1:abort_on_error=0:symbolize=0:malloc_context_size=0",
                limits.memory_mb
            ),
        )
        .stdin(if extra.stdin.is_some() {
            Stdio::piped()
        } else {
            Stdio::null()
        })
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    #[cfg(unix)]
    {
        use std::os::unix::process::CommandExt;
        // Own process group: a timeout kills forked children too.
        cmd.process_group(0);
    }
    let mut child = cmd.spawn()?;
    if let (Some(bytes), Some(mut pipe)) = (extra.stdin, child.stdin.take()) {
        // A writer thread: a program that does not read its input never blocks us.
        let bytes = bytes.to_vec();
        std::thread::spawn(move || {
            use std::io::Write;
            let _ = pipe.write_all(&bytes);
        });
    }
    let mut out = child.stdout.take();
    let mut err = child.stderr.take();
    // Readers on threads so a full pipe never blocks the child; output is capped.
    let (out_tx, out_rx) = std::sync::mpsc::channel();
    let (err_tx, err_rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let mut buf = Vec::new();
        if let Some(o) = out.as_mut() {
            let _ = o.take(64 << 20).read_to_end(&mut buf);
        }
        let _ = out_tx.send(buf);
    });
    std::thread::spawn(move || {
        let mut buf = Vec::new();
        if let Some(e) = err.as_mut() {
            let _ = e.take(1 << 20).read_to_end(&mut buf);
        }
        let _ = err_tx.send(buf);
    });
    let deadline = Instant::now() + limits.wall;
    let mut timed_out = false;
    let mut polls = 0u32;
    // A backstop for runs without an address-space limit (ASan): the process group's
    // resident memory, checked every quarter second, may not pass twice the limit.
    let rss_cap_kb = limits.memory_mb.saturating_mul(2048);
    let status = loop {
        match child.try_wait()? {
            Some(s) => break s,
            None => {
                polls += 1;
                let over =
                    extra.asan && polls.is_multiple_of(25) && group_rss_kb(child.id()) > rss_cap_kb;
                if over || Instant::now() >= deadline {
                    timed_out = true;
                    kill_group(child.id());
                    let _ = child.kill();
                    break child.wait()?;
                }
                std::thread::sleep(Duration::from_millis(10));
            }
        }
    };
    // Leftover grandchildren may hold the pipes open: wait a little, not forever.
    let grace = Duration::from_secs(3);
    let stdout = out_rx.recv_timeout(grace).unwrap_or_default();
    let stderr = err_rx.recv_timeout(grace).unwrap_or_default();
    Ok(RunOutput {
        stdout: String::from_utf8_lossy(&stdout).into_owned(),
        stderr: String::from_utf8_lossy(&stderr).into_owned(),
        status: if timed_out { None } else { status.code() },
        timed_out,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_timeout_kills_the_whole_group_and_nothing_else() {
        let dir = std::env::temp_dir().join(format!("cc-sandbox-kill-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let marker = dir.join("late");
        let _ = std::fs::remove_file(&marker);
        // A grandchild that would leave a mark after the timeout, unless its group is killed.
        let script = format!("(sleep 2; touch '{}') & sleep 30", marker.display());
        let limits = Limits {
            wall: Duration::from_millis(400),
            memory_mb: 256,
        };
        let out = run("sh", &["-c".to_string(), script], &dir, limits).unwrap();
        assert!(out.timed_out);
        std::thread::sleep(Duration::from_millis(2600));
        assert!(!marker.exists(), "the grandchild outlived the timeout");
        // Neither this process's group nor init is ever signalled.
        assert!(!kill_group(0));
        assert!(!kill_group(1));
        let _ = std::fs::remove_dir_all(&dir);
    }
}
