//! Temp pack files a killed transfer can be recovered from: before a fetch or push, the process
//! doing it writes its PID to `teammem-transfer` in the common git folder, and removes the note
//! once the transfer is over.
//!
//! libgit2's indexer streams a fetched pack into `objects/pack/pack_git2_*`, then writes
//! `pack-<id>.idx` through `pack-<id>.idx.lock` and renames the pack; git's own fetch uses
//! `tmp_pack_*` and `tmp_idx_*`; libgit2 also rewrites `.git/shallow` through `shallow.lock`
//! at the end of a fetch. A kill leaves these behind: harmless to git, but they grow
//! the repository at every interrupted sync. The next sync, holding the sync lock, removes them
//! only when the note proves they are the dead transfer's: its process is gone, the files were
//! made after the note, and they have not changed for [`STILL_FOR`](crate::git::recovery::ref_move::STILL_FOR).

use std::fs;
use std::path::{Path, PathBuf};
use std::time::SystemTime;

use git2::Repository;

use crate::git::GitError;
use crate::git::recovery::lock::process_alive;
use crate::git::recovery::ref_move::STILL_FOR;

use super::TRANSFER_NOTE;

/// A transfer announced in the note; dropping it removes the note.
#[derive(Debug)]
pub struct TransferNote {
    path: PathBuf,
}

impl TransferNote {
    /// Notes that this process is about to transfer objects into the repository. Call it only
    /// while the sync lock is held (by this process or the parent that started it).
    pub fn announce(repo: &Repository) -> Result<TransferNote, GitError> {
        let path = repo.commondir().join(TRANSFER_NOTE);
        fs::write(&path, format!("{}\n", std::process::id()))
            .map_err(|e| GitError::io(&path, e))?;
        Ok(TransferNote { path })
    }
}

impl Drop for TransferNote {
    fn drop(&mut self) {
        let _ = fs::remove_file(&self.path);
    }
}

/// Removes the temp pack files of a transfer whose process is dead: `known_dead` (a helper
/// this process just killed), or whichever PID the note names when that process is gone.
/// Returns how many files were removed. Call it only while holding the sync lock.
pub fn clean_if_dead(repo: &Repository, known_dead: Option<u32>) -> Result<usize, GitError> {
    let note = repo.commondir().join(TRANSFER_NOTE);
    let (text, noted) = match (fs::read_to_string(&note), fs::metadata(&note)) {
        (Ok(text), Ok(meta)) => (text, meta.modified().ok()),
        _ => return Ok(0),
    };
    let Some(pid) = text.trim_end().parse::<u32>().ok() else {
        // Cut short by a kill while being written: it proves nothing, and nothing else reads it.
        let _ = fs::remove_file(&note);
        return Ok(0);
    };
    let dead = known_dead == Some(pid) || !process_alive(pid);
    if !dead {
        return Ok(0);
    }
    let pack_dir = repo.commondir().join("objects").join("pack");
    let mut candidates = leftovers(repo, &pack_dir, noted);
    if known_dead != Some(pid) {
        // Another program's transfer started since would still be writing: keep what changes.
        let young = candidates
            .iter()
            .filter_map(|(_, meta)| meta.modified().ok()?.elapsed().ok())
            .min();
        if young.is_some_and(|age| age < STILL_FOR) {
            std::thread::sleep(STILL_FOR);
            let again = leftovers(repo, &pack_dir, noted);
            candidates.retain(|(path, meta)| {
                again.iter().any(|(p, m)| {
                    p == path && m.len() == meta.len() && m.modified().ok() == meta.modified().ok()
                })
            });
        }
    }
    let mut removed = 0;
    for (path, _) in &candidates {
        if fs::remove_file(path).is_ok() {
            removed += 1;
        }
    }
    let _ = fs::remove_file(&note);
    Ok(removed)
}

/// Temp files of a transfer made no earlier than the note: in `pack_dir`, and the
/// `shallow.lock` libgit2 takes to rewrite `.git/shallow` at the end of every fetch.
fn leftovers(
    repo: &Repository,
    pack_dir: &Path,
    noted: Option<SystemTime>,
) -> Vec<(PathBuf, fs::Metadata)> {
    let Some(noted) = noted else {
        return Vec::new();
    };
    let mut found = Vec::new();
    let shallow_lock = repo.commondir().join("shallow.lock");
    if let Ok(meta) = fs::symlink_metadata(&shallow_lock) {
        if meta.is_file() && meta.modified().is_ok_and(|made| made >= noted) {
            found.push((shallow_lock, meta));
        }
    }
    let Ok(entries) = fs::read_dir(pack_dir) else {
        return found;
    };
    for entry in entries.flatten() {
        let name = entry.file_name();
        let Some(name) = name.to_str() else { continue };
        let temp = name.starts_with("pack_git2_")
            || name.starts_with("tmp_pack_")
            || name.starts_with("tmp_idx_")
            || name.starts_with("tmp_rev_")
            || name.ends_with(".lock")
            || orphan_pack(pack_dir, name);
        if !temp {
            continue;
        }
        let Ok(meta) = entry.metadata() else { continue };
        if meta.is_file() && meta.modified().is_ok_and(|made| made >= noted) {
            found.push((entry.path(), meta));
        }
    }
    found
}

/// A `pack-<id>.pack` without its `.idx`: libgit2 renames the pack before the index lands.
fn orphan_pack(pack_dir: &Path, name: &str) -> bool {
    match name.strip_suffix(".pack") {
        Some(stem) if stem.starts_with("pack-") => !pack_dir.join(format!("{stem}.idx")).exists(),
        _ => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    use crate::git::scratch_repo as repo;

    #[test]
    fn a_dead_transfers_temp_packs_go_and_other_files_stay() {
        let (_dir, repo) = repo();
        let pack = repo.commondir().join("objects/pack");
        fs::create_dir_all(&pack).unwrap();
        let old = pack.join("pack-1111111111111111111111111111111111111111.pack");
        fs::write(&old, "old").unwrap();
        fs::write(
            pack.join("pack-1111111111111111111111111111111111111111.idx"),
            "i",
        )
        .unwrap();
        std::thread::sleep(std::time::Duration::from_millis(20));
        // PIDs above the kernel's maximum (4194304) never run.
        fs::write(repo.commondir().join(TRANSFER_NOTE), "4194399\n").unwrap();
        for name in [
            "pack_git2_a1b2c3",
            "pack_git2_a1b2c3.idx.lock",
            "tmp_pack_XyZ",
        ] {
            fs::write(pack.join(name), "partial").unwrap();
        }
        fs::write(repo.commondir().join("shallow.lock"), "").unwrap();
        let kept = pack.join("pack-2222222222222222222222222222222222222222.pack");
        fs::write(&kept, "p").unwrap();
        fs::write(
            pack.join("pack-2222222222222222222222222222222222222222.idx"),
            "i",
        )
        .unwrap();
        assert_eq!(clean_if_dead(&repo, None).unwrap(), 4);
        assert!(!repo.commondir().join("shallow.lock").exists());
        assert!(old.exists() && kept.exists());
        assert!(!repo.commondir().join(TRANSFER_NOTE).exists());
    }

    #[test]
    fn a_live_transfer_is_left_alone() {
        let (_dir, repo) = repo();
        let pack = repo.commondir().join("objects/pack");
        fs::create_dir_all(&pack).unwrap();
        let _note = TransferNote::announce(&repo).unwrap();
        fs::write(pack.join("pack_git2_live"), "streaming").unwrap();
        assert_eq!(clean_if_dead(&repo, None).unwrap(), 0);
        assert!(pack.join("pack_git2_live").exists());
    }
}
