//! Ref moves a killed sync can be recovered from: before libgit2 locks a ref, sync writes which
//! ref it is about to move (and to what, when known) to `teammem-ref-move` in the common git
//! folder, and removes that note once the move is over.
//!
//! libgit2, like git, takes `<ref>.lock` with an exclusive create, writes the new id into it and
//! renames it over the ref. A SIGKILL between the create and the rename leaves the lock behind,
//! and every later update of that ref fails ("failed to lock file … for writing"); git does the
//! same and tells the user to delete the file. The next sync, holding the sync lock (so the
//! writer of any note left is dead), removes such a lock only when it can tell it is that dead
//! sync's: the note names the ref, the lock is no older than the note, it holds nothing or (a
//! beginning of) the id the note names, and it has not changed for [`STILL_FOR`] — git holds a
//! ref lock for milliseconds.

use std::fs;
use std::io;
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};
use std::time::{Duration, SystemTime};

use git2::{Oid, Repository};

use crate::git::GitError;
use crate::git::staging_index::update::remove_if_there;

use super::REF_MOVE_NOTE;

/// How long a lock must have stayed unchanged before it is judged abandoned.
pub const STILL_FOR: Duration = Duration::from_millis(250);

/// A ref move announced in the note; dropping it removes the note.
#[derive(Debug)]
pub struct RefIntent {
    path: PathBuf,
}

impl RefIntent {
    /// Notes that `refname` is about to move, to `new` when the new id is known (a fetch learns
    /// it only from the remote). Call it only while holding the sync lock.
    pub fn announce(
        repo: &Repository,
        refname: &str,
        new: Option<Oid>,
    ) -> Result<RefIntent, GitError> {
        let path = repo.commondir().join(REF_MOVE_NOTE);
        let target = new.map_or_else(|| "-".to_string(), |id| id.to_string());
        fs::write(&path, format!("{refname} {target}\n")).map_err(|e| GitError::io(&path, e))?;
        Ok(RefIntent { path })
    }
}

impl Drop for RefIntent {
    fn drop(&mut self) {
        let _ = fs::remove_file(&self.path);
    }
}

/// Removes the ref lock a killed sync left, if the note it wrote proves the lock is its own.
/// Returns the ref whose lock was removed. Call it only while holding the sync lock.
pub fn release_abandoned_ref_lock(repo: &Repository) -> Result<Option<String>, GitError> {
    release(repo, true)
}

/// The same, right after this process killed the note's writer (a helper at the deadline):
/// the writer is known dead, so the lock need not be watched for [`STILL_FOR`].
pub fn release_lock_of_dead_writer(repo: &Repository) -> Result<Option<String>, GitError> {
    release(repo, false)
}

fn release(repo: &Repository, watch: bool) -> Result<Option<String>, GitError> {
    let note = repo.commondir().join(REF_MOVE_NOTE);
    let (text, noted) = match (fs::read_to_string(&note), fs::metadata(&note)) {
        (Ok(text), Ok(meta)) => (text, meta.modified().ok()),
        _ => return Ok(None),
    };
    let released = match parse(&text) {
        Some((refname, new)) => {
            let lock = lock_path(repo, refname);
            if abandoned(&lock, new, noted, watch) {
                remove_if_there(&lock)?;
                Some(refname.to_string())
            } else {
                None
            }
        }
        None => None,
    };
    remove_if_there(&note)?;
    Ok(released)
}

/// `refname target` where target is an object id or `-`; anything else (a truncated note, a
/// name that could leave the refs folder) is no proof of anything.
fn parse(text: &str) -> Option<(&str, Option<&str>)> {
    let line = text.strip_suffix('\n')?;
    let (refname, target) = line.split_once(' ')?;
    let safe = refname.starts_with("refs/")
        && refname
            .split('/')
            .all(|part| !part.is_empty() && part != "." && part != "..");
    let target = match target {
        "-" => None,
        id if is_hex_id(id) => Some(id),
        _ => return None,
    };
    safe.then_some((refname, target))
}

fn is_hex_id(id: &str) -> bool {
    matches!(id.len(), 40 | 64) && id.bytes().all(|b| b.is_ascii_hexdigit())
}

fn lock_path(repo: &Repository, refname: &str) -> PathBuf {
    let mut path = repo.commondir().join(refname).into_os_string();
    path.push(".lock");
    PathBuf::from(path)
}

/// Whether the lock at `lock` is the one the dead sync took: made after its note, holding what
/// libgit2 writes into a ref lock for that move, and left unchanged for [`STILL_FOR`].
fn abandoned(lock: &Path, new: Option<&str>, noted: Option<SystemTime>, watch: bool) -> bool {
    let Ok(first) = fs::symlink_metadata(lock) else {
        return false;
    };
    let made_after_note = match (first.modified(), noted) {
        (Ok(made), Some(noted)) => made >= noted,
        _ => false,
    };
    if !first.is_file() || !made_after_note || !holds_move(lock, new) {
        return false;
    }
    if !watch {
        return true;
    }
    let age = first
        .modified()
        .ok()
        .and_then(|made| made.elapsed().ok())
        .unwrap_or_default();
    if age < STILL_FOR {
        std::thread::sleep(STILL_FOR - age);
    }
    match fs::symlink_metadata(lock) {
        Ok(now) => same_version(&first, &now) && holds_move(lock, new),
        Err(_) => false,
    }
}

/// A ref lock holds `<id>\n` once written; a kill can leave it empty or cut short.
fn holds_move(lock: &Path, new: Option<&str>) -> bool {
    let text = match fs::read(lock) {
        Ok(bytes) if bytes.len() <= 65 => bytes,
        Ok(_) => return false,
        Err(e) if e.kind() == io::ErrorKind::NotFound => return false,
        Err(_) => return false,
    };
    let (id, rest) = match text.iter().position(|&b| b == b'\n') {
        Some(end) => (&text[..end], &text[end..]),
        None => (&text[..], &[][..]),
    };
    if rest.len() > 1 || !id.iter().all(u8::is_ascii_hexdigit) {
        return false;
    }
    match new {
        Some(new) => new.as_bytes().starts_with(id) && (rest.is_empty() || id.len() == new.len()),
        None => rest.is_empty() || matches!(id.len(), 40 | 64),
    }
}

fn same_version(a: &fs::Metadata, b: &fs::Metadata) -> bool {
    a.ino() == b.ino()
        && a.len() == b.len()
        && a.mtime() == b.mtime()
        && a.mtime_nsec() == b.mtime_nsec()
}

#[cfg(test)]
mod tests {
    use super::*;

    use crate::git::scratch_repo as repo;

    const ID: &str = "0123456789abcdef0123456789abcdef01234567";

    fn leave(repo: &Repository, note: &str, lock: Option<&str>) -> PathBuf {
        fs::write(repo.commondir().join(REF_MOVE_NOTE), note).unwrap();
        let path = repo.commondir().join("refs/heads/main.lock");
        if let Some(content) = lock {
            fs::write(&path, content).unwrap();
        }
        path
    }

    #[test]
    fn a_lock_holding_the_noted_id_is_released_and_the_note_goes() {
        let (_dir, repo) = repo();
        let lock = leave(
            &repo,
            &format!("refs/heads/main {ID}\n"),
            Some(&format!("{ID}\n")),
        );
        let released = release_abandoned_ref_lock(&repo).unwrap();
        assert_eq!(released.as_deref(), Some("refs/heads/main"));
        assert!(!lock.exists());
        assert!(!repo.commondir().join(REF_MOVE_NOTE).exists());
    }

    #[test]
    fn an_empty_or_cut_lock_is_released() {
        for content in ["", &ID[..7]] {
            let (_dir, repo) = repo();
            let lock = leave(&repo, &format!("refs/heads/main {ID}\n"), Some(content));
            assert!(release_abandoned_ref_lock(&repo).unwrap().is_some());
            assert!(!lock.exists());
        }
    }

    #[test]
    fn a_lock_holding_another_id_is_someone_elses() {
        let (_dir, repo) = repo();
        let other = "fedcba9876543210fedcba9876543210fedcba98";
        let lock = leave(
            &repo,
            &format!("refs/heads/main {ID}\n"),
            Some(&format!("{other}\n")),
        );
        assert_eq!(release_abandoned_ref_lock(&repo).unwrap(), None);
        assert!(lock.exists(), "another process's lock must stay");
        assert!(!repo.commondir().join(REF_MOVE_NOTE).exists());
    }

    #[test]
    fn a_lock_older_than_the_note_is_someone_elses() {
        let (_dir, repo) = repo();
        let lock = repo.commondir().join("refs/heads/main.lock");
        fs::write(&lock, "").unwrap();
        std::thread::sleep(Duration::from_millis(20));
        fs::write(
            repo.commondir().join(REF_MOVE_NOTE),
            format!("refs/heads/main {ID}\n"),
        )
        .unwrap();
        assert_eq!(release_abandoned_ref_lock(&repo).unwrap(), None);
        assert!(lock.exists());
    }

    #[test]
    fn a_fetch_note_accepts_any_whole_id() {
        let (_dir, repo) = repo();
        fs::create_dir_all(repo.commondir().join("refs/remotes/origin")).unwrap();
        fs::write(
            repo.commondir().join(REF_MOVE_NOTE),
            "refs/remotes/origin/main -\n",
        )
        .unwrap();
        let lock = repo.commondir().join("refs/remotes/origin/main.lock");
        fs::write(&lock, format!("{ID}\n")).unwrap();
        assert!(release_abandoned_ref_lock(&repo).unwrap().is_some());
        assert!(!lock.exists());
    }

    #[test]
    fn a_note_naming_a_path_outside_refs_proves_nothing() {
        for note in [
            format!("../../victim {ID}\n"),
            format!("refs/../../victim {ID}\n"),
            format!("HEAD {ID}\n"),
            format!("refs/heads/main {ID}"),
            "refs/heads/main not-an-id\n".to_string(),
        ] {
            assert_eq!(parse(&note), None, "{note:?}");
        }
    }

    #[test]
    fn announcing_and_dropping_leaves_no_note() {
        let (_dir, repo) = repo();
        {
            let _intent = RefIntent::announce(&repo, "refs/heads/main", None).unwrap();
            assert!(repo.commondir().join(REF_MOVE_NOTE).exists());
        }
        assert!(!repo.commondir().join(REF_MOVE_NOTE).exists());
    }
}
