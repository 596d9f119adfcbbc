//! Offline grace: after sync could not reach the remote, a note `teammem-offline` in the common
//! git folder holds when (and why), so the session starts of the next [`GRACE`] skip the network
//! instead of paying the whole budget again at every agent start. A sync that reaches the
//! remote removes the note; `teammem sync` by hand always tries.

use std::fs;
use std::path::{Path, PathBuf};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use super::recovery::OFFLINE_NOTE;

/// How long after a failed attempt session starts skip the network.
pub const GRACE: Duration = Duration::from_secs(10 * 60);

/// A failed attempt the note remembers.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LastFailure {
    /// How long ago it was.
    pub ago: Duration,
    /// What happened (the report's message, first line).
    pub why: String,
}

/// The common git folder of the git folder `git_dir` (a linked worktree's points elsewhere).
fn common_dir(git_dir: &Path) -> PathBuf {
    match fs::read_to_string(git_dir.join("commondir")) {
        Ok(rel) => git_dir.join(rel.trim()),
        Err(_) => git_dir.to_path_buf(),
    }
}

fn now_secs() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_secs())
        .unwrap_or(0)
}

/// Remembers that the remote could not be reached just now.
pub fn remember_failure(git_dir: &Path, why: &str) {
    let line = why.lines().next().unwrap_or("").replace('\n', " ");
    let text = format!("{} {line}\n", now_secs());
    let _ = crate::domain::store::write_atomic(
        &common_dir(git_dir).join(OFFLINE_NOTE),
        text.as_bytes(),
    );
}

/// Forgets the failure: the remote was reached.
pub fn forget_failure(git_dir: &Path) {
    let _ = fs::remove_file(common_dir(git_dir).join(OFFLINE_NOTE));
}

/// The failure remembered within [`GRACE`], if any. A note from the future (a clock set back)
/// or one that cannot be read counts as none.
pub fn recent_failure(git_dir: &Path) -> Option<LastFailure> {
    let text = fs::read_to_string(common_dir(git_dir).join(OFFLINE_NOTE)).ok()?;
    let (when, why) = text
        .trim_end()
        .split_once(' ')
        .unwrap_or((text.trim_end(), ""));
    let when: u64 = when.parse().ok()?;
    let ago = Duration::from_secs(now_secs().checked_sub(when)?);
    (ago < GRACE).then(|| LastFailure {
        ago,
        why: why.to_string(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_failure_is_remembered_for_the_grace_then_forgotten() {
        let dir = tempfile::tempdir().unwrap();
        assert_eq!(recent_failure(dir.path()), None);
        remember_failure(
            dir.path(),
            "fetching main from origin: connection refused\nmore",
        );
        let last = recent_failure(dir.path()).unwrap();
        assert_eq!(last.why, "fetching main from origin: connection refused");
        let old = now_secs() - GRACE.as_secs() - 1;
        fs::write(dir.path().join(OFFLINE_NOTE), format!("{old} x\n")).unwrap();
        assert_eq!(recent_failure(dir.path()), None);
        let future = now_secs() + 3600;
        fs::write(dir.path().join(OFFLINE_NOTE), format!("{future} x\n")).unwrap();
        assert_eq!(recent_failure(dir.path()), None);
        remember_failure(dir.path(), "again");
        forget_failure(dir.path());
        assert_eq!(recent_failure(dir.path()), None);
    }
}
