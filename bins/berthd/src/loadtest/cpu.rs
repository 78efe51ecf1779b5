//! CPU time of processes from `/proc` (Linux): a daemon, this load generator, and a PostgreSQL
//! cluster (its postmaster and every child, including children that exited since: the kernel
//! adds a reaped child's time to its parent's `cutime`/`cstime`).

use std::path::Path;

/// Clock ticks per second of `/proc/<pid>/stat` (`USER_HZ`): 100 on every Linux architecture,
/// fixed by the kernel ABI whatever the kernel's own `HZ`.
const TICKS_PER_S: f64 = 100.0;

/// `(own, reaped children)` CPU ticks (user + system) of `pid`, `None` when it is gone or
/// `/proc` is not there.
fn ticks(pid: u32) -> Option<(u64, u64)> {
    let text = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    stat_ticks(&text)
}

/// Parses a `/proc/<pid>/stat` line: after the `)` closing the command name, field 3 is the
/// state; utime, stime, cutime, cstime are fields 14 to 17.
fn stat_ticks(text: &str) -> Option<(u64, u64)> {
    let rest = &text[text.rfind(')')? + 1..];
    let f: Vec<&str> = rest.split_whitespace().collect();
    let n = |i: usize| f.get(i - 3).and_then(|v| v.parse::<u64>().ok());
    Some((n(14)? + n(15)?, n(16)? + n(17)?))
}

/// The parent pid in a `/proc/<pid>/stat` line (field 4).
fn stat_ppid(text: &str) -> Option<u32> {
    let rest = &text[text.rfind(')')? + 1..];
    rest.split_whitespace().nth(1)?.parse().ok()
}

/// CPU seconds `pid` has used so far (its threads included).
pub fn process_s(pid: u32) -> Option<f64> {
    ticks(pid).map(|(own, _)| own as f64 / TICKS_PER_S)
}

/// CPU seconds this process has used so far.
pub fn own_s() -> f64 {
    process_s(std::process::id()).unwrap_or(0.0)
}

/// CPU seconds of a process tree so far: `root` and its reaped children, and every live
/// child with its own reaped children (PostgreSQL's backends are children of the postmaster).
pub fn tree_s(root: u32) -> Option<f64> {
    let (own, reaped) = ticks(root)?;
    let mut total = own + reaped;
    if let Ok(dir) = std::fs::read_dir("/proc") {
        for e in dir.flatten() {
            let Some(pid) = e.file_name().to_str().and_then(|s| s.parse::<u32>().ok()) else {
                continue;
            };
            let Ok(text) = std::fs::read_to_string(format!("/proc/{pid}/stat")) else {
                continue;
            };
            if stat_ppid(&text) == Some(root)
                && let Some((o, r)) = stat_ticks(&text)
            {
                total += o + r;
            }
        }
    }
    Some(total as f64 / TICKS_PER_S)
}

/// The postmaster's pid from `<data>/postmaster.pid` (its first line).
pub fn postmaster(data: &Path) -> Option<u32> {
    let text = std::fs::read_to_string(data.join("postmaster.pid")).ok()?;
    text.lines().next()?.trim().parse().ok()
}

/// The 1-minute load average.
pub fn load_1m() -> Option<f64> {
    let text = std::fs::read_to_string("/proc/loadavg").ok()?;
    text.split_whitespace().next()?.parse().ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stat_lines_give_ticks_and_parent() {
        // A command name with spaces and parentheses, as `/proc` shows it.
        let line = "4242 (postgres: a (b) c) S 4200 4242 4242 0 -1 4194560 100 0 0 0 \
                    150 25 7 3 20 0 1 0 12345 1000 100 18446744073709551615";
        assert_eq!(stat_ticks(line), Some((175, 10)));
        assert_eq!(stat_ppid(line), Some(4200));
        assert_eq!(stat_ticks("garbage"), None);
    }

    #[test]
    fn this_process_is_seen() {
        let busy: u64 = (0..2_000_000u64).fold(0, |a, x| a.wrapping_add(x * x));
        assert!(busy > 0);
        assert!(process_s(std::process::id()).is_some());
        let tree = tree_s(std::process::id()).unwrap();
        assert!(tree >= own_s() - 0.011, "tree {tree} < own {}", own_s());
        assert!(load_1m().is_some_and(|l| l >= 0.0));
    }
}
