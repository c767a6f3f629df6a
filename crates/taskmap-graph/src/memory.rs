//! The memory this process can still use, so that work whose size depends on the input is
//! refused with a reason before it is allocated, rather than ended by the allocator or by
//! the kernel's out-of-memory killer.

use std::fmt;

thread_local! {
    /// Set on a thread inside [`fallible`].
    static FALLIBLE: std::cell::Cell<bool> = const { std::cell::Cell::new(false) };
}

/// Runs `f` with allocations allowed to fail on this thread: under an allocator that ends
/// the process when the system refuses memory (the CLI's), `try_reserve` inside `f` gets
/// its error back instead, so that the caller can say what was too large.
pub fn fallible<T>(f: impl FnOnce() -> T) -> T {
    /// Restores the flag, also when `f` panics.
    struct Restore(bool);
    impl Drop for Restore {
        fn drop(&mut self) {
            FALLIBLE.set(self.0);
        }
    }
    let _restore = Restore(FALLIBLE.replace(true));
    f()
}

/// Whether this thread is inside [`fallible`] (for an allocator: return the failure).
pub fn allocation_may_fail() -> bool {
    FALLIBLE.get()
}

/// How much memory is left, and what limits it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Budget {
    /// Bytes this process can still allocate.
    pub bytes: u64,
    /// What sets the bound: the machine's available memory, a cgroup's limit, the
    /// address-space limit (`ulimit -v`) or `TASKMAP_MEMORY_LIMIT`.
    pub source: &'static str,
}

/// The memory this process can still allocate: the smallest of
/// - `MemAvailable` in `/proc/meminfo` (the kernel's estimate of what can be allocated
///   without swapping);
/// - the room left in the process's cgroup and the cgroups above it (cgroup v2
///   `memory.max` less `memory.current`, page cache that can be dropped not counted: a
///   container's or a Slurm job's limit);
/// - the address-space limit (`ulimit -v`, from `/proc/self/limits`) less the address space
///   the process already holds (`VmSize` in `/proc/self/status`).
///
/// `TASKMAP_MEMORY_LIMIT` (bytes, or a number with a `K`, `M`, `G` or `T` suffix, powers of
/// 1024: `512M`, `1.5G`, `2GiB`) replaces all three, to lower the bound on a shared
/// machine or to raise it where they underestimate (swap). `None` where nothing can be
/// read (not Linux, and no variable set).
pub fn available() -> Option<Budget> {
    if let Some(bytes) = std::env::var("TASKMAP_MEMORY_LIMIT")
        .ok()
        .and_then(|v| parse_size(&v))
    {
        return Some(Budget {
            bytes,
            source: "TASKMAP_MEMORY_LIMIT",
        });
    }
    [
        (meminfo_available(), "the available memory (MemAvailable)"),
        (cgroup_left(), "the cgroup's memory limit (memory.max)"),
        (address_space_left(), "the address-space limit (ulimit -v)"),
    ]
    .into_iter()
    .filter_map(|(bytes, source)| {
        Some(Budget {
            bytes: bytes?,
            source,
        })
    })
    .min_by_key(|b| b.bytes)
}

/// A request for more memory than is left.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Shortage {
    /// What needed the memory ("a random graph of 100000000 tasks").
    pub what: String,
    /// Bytes it needs.
    pub needed: u128,
    /// What was left.
    pub budget: Budget,
}

impl fmt::Display for Shortage {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{} needs about {}, but {} leaves {} (short by {})",
            self.what,
            human_bytes(self.needed),
            self.budget.source,
            human_bytes(u128::from(self.budget.bytes)),
            human_bytes(self.needed.saturating_sub(u128::from(self.budget.bytes)))
        )
    }
}

impl std::error::Error for Shortage {}

/// `Err` when `needed` bytes are more than [`available`] leaves; `Ok` when they fit, or
/// when nothing is known of the memory. `what` is only built on the error path.
pub fn ensure(needed: u128, what: impl FnOnce() -> String) -> Result<(), Shortage> {
    match available() {
        Some(budget) if needed > u128::from(budget.bytes) => Err(Shortage {
            what: what(),
            needed,
            budget,
        }),
        _ => Ok(()),
    }
}

/// `1536` → `"1.5 KiB"`; bytes below 1 KiB are written as such.
pub fn human_bytes(b: u128) -> String {
    const UNITS: [&str; 6] = ["KiB", "MiB", "GiB", "TiB", "PiB", "EiB"];
    if b < 1024 {
        return format!("{b} bytes");
    }
    let mut v = b as f64 / 1024.0;
    let mut unit = 0;
    while v >= 1024.0 && unit + 1 < UNITS.len() {
        v /= 1024.0;
        unit += 1;
    }
    format!("{v:.1} {}", UNITS[unit])
}

/// `"512M"` → 536870912: a number (decimals allowed), then optionally `K`, `M`, `G` or `T`
/// (powers of 1024), optionally followed by `B` or `iB`.
fn parse_size(s: &str) -> Option<u64> {
    let s = s.trim();
    let lower = s.to_ascii_lowercase();
    let s = if lower.ends_with("ib") {
        &s[..s.len() - 2]
    } else if lower.ends_with('b') {
        &s[..s.len() - 1]
    } else {
        s
    };
    let (digits, shift) = match s.as_bytes().last()?.to_ascii_uppercase() {
        b'K' => (&s[..s.len() - 1], 10),
        b'M' => (&s[..s.len() - 1], 20),
        b'G' => (&s[..s.len() - 1], 30),
        b'T' => (&s[..s.len() - 1], 40),
        _ => (s, 0),
    };
    let v: f64 = digits.trim().parse().ok()?;
    let bytes = v * (1u64 << shift) as f64;
    // Beyond 2^64 bytes: as good as no limit (the cast saturates).
    (bytes.is_finite() && bytes >= 0.0).then_some(bytes as u64)
}

/// The least room left under the cgroup v2 memory limits of this process's cgroup and
/// those above it (a Slurm job's limit sits on the job's cgroup, above the task's), with
/// the inactive page cache counted as free; `None` without a limit.
fn cgroup_left() -> Option<u64> {
    let cgroup = std::fs::read_to_string("/proc/self/cgroup").ok()?;
    let path = cgroup.lines().find_map(|l| l.strip_prefix("0::"))?;
    let root = std::path::Path::new("/sys/fs/cgroup");
    let mut dir = root.join(path.trim_start_matches('/'));
    let mut least: Option<u64> = None;
    while dir.starts_with(root) {
        let read = |name: &str| std::fs::read_to_string(dir.join(name)).ok();
        // "max" (no limit) does not parse.
        if let Some(max) = read("memory.max").and_then(|m| m.trim().parse::<u64>().ok()) {
            let current: u64 = read("memory.current")
                .and_then(|c| c.trim().parse().ok())
                .unwrap_or(0);
            let inactive = read("memory.stat")
                .and_then(|st| {
                    st.lines()
                        .find_map(|l| l.strip_prefix("inactive_file "))
                        .and_then(|v| v.trim().parse::<u64>().ok())
                })
                .unwrap_or(0);
            let room = max.saturating_sub(current.saturating_sub(inactive));
            least = Some(least.map_or(room, |l| l.min(room)));
        }
        if !dir.pop() || dir == root {
            break;
        }
    }
    least
}

/// `MemAvailable`, in bytes.
fn meminfo_available() -> Option<u64> {
    let text = std::fs::read_to_string("/proc/meminfo").ok()?;
    kib_field(&text, "MemAvailable:")
}

/// The room left under `RLIMIT_AS`, or `None` when it is unlimited.
fn address_space_left() -> Option<u64> {
    let limits = std::fs::read_to_string("/proc/self/limits").ok()?;
    let line = limits
        .lines()
        .find(|l| l.starts_with("Max address space"))?;
    // "Max address space   <soft>   <hard>   bytes"
    let soft: u64 = line
        .trim_start_matches("Max address space")
        .split_whitespace()
        .next()?
        .parse()
        .ok()?;
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    let used = kib_field(&status, "VmSize:").unwrap_or(0);
    Some(soft.saturating_sub(used))
}

/// The value of a `NAME:   123 kB` line, in bytes.
fn kib_field(text: &str, name: &str) -> Option<u64> {
    let line = text.lines().find(|l| l.starts_with(name))?;
    let kib: u64 = line[name.len()..].split_whitespace().next()?.parse().ok()?;
    kib.checked_mul(1024)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sizes_and_fields_parse() {
        assert_eq!(parse_size("512M"), Some(512 << 20));
        assert_eq!(parse_size(" 3g "), Some(3 << 30));
        assert_eq!(parse_size("1000"), Some(1000));
        assert_eq!(parse_size("1.5G"), Some(3 << 29));
        assert_eq!(parse_size("2GiB"), Some(2 << 30));
        assert_eq!(parse_size("2GB"), Some(2 << 30));
        assert_eq!(parse_size("x"), None);
        assert_eq!(parse_size("-1"), None);
        assert_eq!(parse_size("2GIB"), Some(2 << 30));
        assert_eq!(parse_size("1e30"), Some(u64::MAX));
        assert_eq!(
            kib_field(
                "MemTotal: 10 kB\nMemAvailable:    2048 kB\n",
                "MemAvailable:"
            ),
            Some(2 << 20)
        );
        assert_eq!(human_bytes(1536), "1.5 KiB");
        assert_eq!(human_bytes(3 << 30), "3.0 GiB");
        assert_eq!(human_bytes(12), "12 bytes");
    }

    #[test]
    fn a_request_beyond_the_machine_is_refused() {
        // No machine has 2^100 bytes; on Linux the available memory is always known.
        if available().is_some() {
            let e = ensure(1 << 100, || "a test".into()).unwrap_err();
            assert!(e.to_string().starts_with("a test needs about "), "{e}");
            assert!(ensure(1, || unreachable!()).is_ok());
        }
    }
}
