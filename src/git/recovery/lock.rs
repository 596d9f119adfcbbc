//! The sync lock: one sync at a time per repository, a file `teammem-sync.lock` in the common
//! git folder holding the owner's PID and start time.
//!
//! git has no lock for "a sync is running"; this one is teammem's own. A lock left by a process
//! that is gone (killed, crashed) or older than [`STALE_AFTER`] is taken over, so an interrupted
//! sync never blocks the next one.

use std::fs;
use std::io;
use std::path::{Path, PathBuf};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use git2::Repository;

use crate::git::GitError;

use super::SYNC_LOCK;

/// A lock older than this is taken over even when its process still seems to run.
pub const STALE_AFTER: Duration = Duration::from_secs(10 * 60);

/// A held sync lock; dropping it releases the lock.
#[derive(Debug)]
pub struct SyncLock {
    path: PathBuf,
    token: String,
}

/// Who holds a lock, as written in its file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LockOwner {
    /// The holder's process id.
    pub pid: u32,
    /// When it started, in seconds since the Unix epoch.
    pub started: u64,
}

impl SyncLock {
    /// Takes the repository's sync lock. Returns `Ok(Err(owner))` when another live sync holds
    /// it (`owner` is `None` when its file cannot be read yet).
    pub fn acquire(repo: &Repository) -> Result<Result<SyncLock, Option<LockOwner>>, GitError> {
        Self::acquire_in(repo.commondir())
    }

    /// [`Self::acquire`] for the repository whose common git folder is `common_dir` (one
    /// libgit2 cannot open, `git/cli_repo/`).
    pub fn acquire_in(common_dir: &Path) -> Result<Result<SyncLock, Option<LockOwner>>, GitError> {
        let path = common_dir.join(SYNC_LOCK);
        let now = now_secs();
        let token = format!("{} {now}\n", std::process::id());
        for _ in 0..2 {
            match create_lock(&path, &token) {
                Ok(()) => return Ok(Ok(SyncLock { path, token })),
                Err(e) if e.kind() == io::ErrorKind::AlreadyExists => {}
                Err(e) => return Err(GitError::io(&path, e)),
            }
            let text = fs::read_to_string(&path).unwrap_or_default();
            let owner = parse_owner(&text);
            if !stale(&path, owner.as_ref(), now) {
                return Ok(Err(owner));
            }
            // Only remove the very lock judged stale: if it changed meanwhile, someone else
            // has taken it over and now holds it.
            if fs::read_to_string(&path).unwrap_or_default() == text {
                let _ = fs::remove_file(&path);
            }
        }
        let owner = parse_owner(&fs::read_to_string(&path).unwrap_or_default());
        Ok(Err(owner))
    }

    /// The lock file (the tests read it).
    #[cfg(test)]
    pub fn path(&self) -> &Path {
        &self.path
    }
}

impl Drop for SyncLock {
    fn drop(&mut self) {
        // Remove only our own lock, never one a later sync took over after judging ours stale.
        if fs::read_to_string(&self.path).is_ok_and(|text| text == self.token) {
            let _ = fs::remove_file(&self.path);
        }
    }
}

/// Whether the sync lock in the common git folder `common_dir` was left by a sync that is gone
/// (killed, crashed) or is older than [`STALE_AFTER`]: what the next sync that takes the lock
/// removes. `false` when there is no lock, or a live sync holds it.
pub fn left_by_a_dead_sync(common_dir: &Path) -> bool {
    let path = common_dir.join(SYNC_LOCK);
    let Ok(text) = fs::read_to_string(&path) else {
        return false;
    };
    stale(&path, parse_owner(&text).as_ref(), now_secs())
}

/// Whether the lock at `path`, held by `owner` as its file says, may be taken over at `now`.
fn stale(path: &Path, owner: Option<&LockOwner>, now: u64) -> bool {
    match owner {
        Some(owner) => {
            !process_alive(owner.pid) || now.saturating_sub(owner.started) > STALE_AFTER.as_secs()
        }
        // Not written by teammem (or by a future version): only its age tells.
        None => file_age(path).is_some_and(|age| age > STALE_AFTER),
    }
}

/// Creates the lock with its content in one step: the content goes to a file of our own, which
/// is then hard-linked as the lock (failing if the lock exists). A kill can never leave an empty
/// lock whose owner is unknown.
fn create_lock(path: &Path, token: &str) -> io::Result<()> {
    let mine = own_file(path, std::process::id());
    remove_dead_owners_files(path);
    let written = fs::write(&mine, token).and_then(|()| fs::hard_link(&mine, path));
    let _ = fs::remove_file(&mine);
    written
}

fn own_file(path: &Path, pid: u32) -> PathBuf {
    let mut name = path.file_name().unwrap_or_default().to_os_string();
    name.push(format!(".{pid}.tmp"));
    path.with_file_name(name)
}

/// Removes the per-process files of syncs killed before they could remove them.
fn remove_dead_owners_files(path: &Path) {
    let (Some(dir), Some(name)) = (path.parent(), path.file_name().and_then(|n| n.to_str())) else {
        return;
    };
    let Ok(entries) = fs::read_dir(dir) else {
        return;
    };
    let prefix = format!("{name}.");
    for entry in entries.flatten() {
        let file = entry.file_name();
        let pid = file
            .to_str()
            .and_then(|f| f.strip_prefix(&prefix))
            .and_then(|f| f.strip_suffix(".tmp"))
            .and_then(|pid| pid.parse::<u32>().ok());
        if pid.is_some_and(|pid| pid != std::process::id() && !process_alive(pid)) {
            let _ = fs::remove_file(entry.path());
        }
    }
}

fn parse_owner(text: &str) -> Option<LockOwner> {
    let mut parts = text.split_whitespace();
    let pid = parts.next()?.parse().ok()?;
    let started = parts.next()?.parse().ok()?;
    Some(LockOwner { pid, started })
}

fn now_secs() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_secs())
        .unwrap_or(0)
}

fn file_age(path: &Path) -> Option<Duration> {
    let modified = fs::metadata(path).ok()?.modified().ok()?;
    SystemTime::now().duration_since(modified).ok()
}

/// Whether a process with this id runs. Where `/proc` is missing (macOS), a process is assumed
/// to run and only the age rule frees its lock.
pub fn process_alive(pid: u32) -> bool {
    let proc = Path::new("/proc");
    if !proc.join("self").exists() {
        return true;
    }
    let stat = match fs::read_to_string(proc.join(pid.to_string()).join("stat")) {
        Ok(stat) => stat,
        Err(_) => return false,
    };
    // A zombie (state `Z`, after the name in parentheses) has finished: its lock is stale.
    let state = stat
        .rsplit_once(')')
        .and_then(|(_, rest)| rest.split_whitespace().next());
    if matches!(state, Some("Z" | "X")) {
        return false;
    }
    !kill_pending(pid)
}

/// Whether SIGKILL is pending for the process: it is dying (a helper whose parent was just
/// killed gets it from the kernel) and will never touch its files again.
fn kill_pending(pid: u32) -> bool {
    let Ok(status) = fs::read_to_string(Path::new("/proc").join(pid.to_string()).join("status"))
    else {
        return false;
    };
    const SIGKILL_BIT: u64 = 1 << (9 - 1);
    status.lines().any(|line| {
        let mask = line
            .strip_prefix("SigPnd:")
            .or_else(|| line.strip_prefix("ShdPnd:"));
        mask.and_then(|m| u64::from_str_radix(m.trim(), 16).ok())
            .is_some_and(|m| m & SIGKILL_BIT != 0)
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    use crate::git::scratch_repo as repo;

    #[test]
    fn second_acquire_is_refused_until_the_first_is_dropped() {
        let (_dir, repo) = repo();
        let first = SyncLock::acquire(&repo).unwrap().unwrap();
        let second = SyncLock::acquire(&repo).unwrap();
        let owner = second.unwrap_err().unwrap();
        assert_eq!(owner.pid, std::process::id());
        drop(first);
        assert!(SyncLock::acquire(&repo).unwrap().is_ok());
    }

    #[test]
    fn lock_of_a_dead_process_is_taken_over() {
        let (_dir, repo) = repo();
        let path = repo.commondir().join(SYNC_LOCK);
        // PIDs above the kernel's maximum (4194304) never run.
        fs::write(&path, format!("4194399 {}\n", now_secs())).unwrap();
        let lock = SyncLock::acquire(&repo).unwrap().unwrap();
        assert!(
            fs::read_to_string(lock.path())
                .unwrap()
                .starts_with(&std::process::id().to_string())
        );
    }

    #[test]
    fn old_lock_is_taken_over() {
        let (_dir, repo) = repo();
        let path = repo.commondir().join(SYNC_LOCK);
        fs::write(&path, format!("{} 1000\n", std::process::id())).unwrap();
        assert!(SyncLock::acquire(&repo).unwrap().is_ok());
    }
}
