//! Checkouts a killed sync can be finished from: before a fast-forward's checkout writes the
//! first file, sync notes the branch, the old tip and the new one in `teammem-checkout` (in the
//! common git folder), and removes the note once the branch has moved.
//!
//! libgit2 writes the files one by one, then the index, then sync moves the branch: a kill in
//! between (a hook timeout, the deadline) leaves HEAD on the old tip with some files of the
//! new one on disk. git would then refuse every pull ("untracked files would be overwritten").
//! The next sync, holding the sync lock, looks at each file the move changes: as in the old
//! tip, as in the new one, missing, or cut short while being written (a beginning of the new
//! content) are the dead checkout's doing, and the move is done again from a clean start. Any
//! other content is a person's edit made since: then the checkout is rolled back instead (the
//! dead checkout's files put back as in the old tip), and the pull reports the edit in its way
//! as `pull-blocked`, as `git merge --ff-only` would.

use std::fs;
use std::io;
use std::path::{Path, PathBuf};
use std::time::SystemTime;

use git2::{FileMode, ObjectType, Oid, Repository};

use crate::git::GitError;
use crate::git::fast_forward::{self, BranchMove};
use crate::git::recovery::lock::process_alive;
use crate::git::recovery::ref_move::STILL_FOR;
use crate::git::tree_entries::SideModes;

use super::CHECKOUT_NOTE;

/// A checkout announced in the note; [`CheckoutNote::done`] removes the note.
#[derive(Debug)]
pub struct CheckoutNote {
    path: PathBuf,
}

impl CheckoutNote {
    /// Notes that `branch_ref` is about to be checked out from `from` to `to`. Call it only
    /// while the sync lock is held.
    pub fn announce(
        repo: &Repository,
        branch_ref: &str,
        from: Option<Oid>,
        to: Oid,
    ) -> Result<CheckoutNote, GitError> {
        let path = repo.commondir().join(CHECKOUT_NOTE);
        let from = from.map_or_else(|| "-".to_string(), |o| o.to_string());
        let text = format!("{} {branch_ref} {from} {to}\n", std::process::id());
        crate::domain::store::write_atomic(&path, text.as_bytes())
            .map_err(|e| GitError::io(&path, io::Error::other(e.to_string())))?;
        Ok(CheckoutNote { path })
    }

    /// The move is over (landed, refused before writing, or put back): removes the note.
    pub fn done(self) {
        let _ = fs::remove_file(&self.path);
    }
}

/// What the note says.
struct Noted {
    pid: u32,
    branch_ref: String,
    from: Option<Oid>,
    to: Oid,
    at: Option<SystemTime>,
}

fn read_note(repo: &Repository) -> Option<Noted> {
    let path = repo.commondir().join(CHECKOUT_NOTE);
    let text = fs::read_to_string(&path).ok()?;
    let at = fs::metadata(&path).ok().and_then(|m| m.modified().ok());
    let mut parts = text.strip_suffix('\n')?.split(' ');
    let pid = parts.next()?.parse().ok()?;
    let branch_ref = parts.next()?.to_string();
    let from = match parts.next()? {
        "-" => None,
        hex => Some(Oid::from_str(hex).ok()?),
    };
    let to = Oid::from_str(parts.next()?).ok()?;
    if parts.next().is_some() || !branch_ref.starts_with("refs/heads/") {
        return None;
    }
    Some(Noted {
        pid,
        branch_ref,
        from,
        to,
        at,
    })
}

/// Whether a checkout was left half-done by a sync that is gone. A note that cannot be read
/// (written atomically, so never cut short) proves nothing and is removed.
pub fn interrupted(repo: &Repository) -> bool {
    let path = repo.commondir().join(CHECKOUT_NOTE);
    if !path.exists() {
        return false;
    }
    match read_note(repo) {
        Some(noted) => noted.pid == std::process::id() || !process_alive(noted.pid),
        None => {
            let _ = fs::remove_file(&path);
            false
        }
    }
}

/// A file the move changes: its path, its blob and mode in the old and the new tip, and how it
/// stands on disk.
type PulledFile = (
    String,
    Option<(Oid, FileMode)>,
    Option<(Oid, FileMode)>,
    OnDisk,
);

/// How a file the move changes stands on disk.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum OnDisk {
    /// As in the old tip (or absent, when the old tip lacks it).
    AsFrom,
    /// As in the new tip (or absent, when the new tip lacks it).
    AsTo,
    /// Absent, though both tips have it.
    Missing,
    /// A beginning of the new content: cut short while being written.
    CutShort,
    /// Anything else: someone changed it since.
    Edited,
}

/// Finishes or rolls back the interrupted checkout; returns what was done, for the report.
pub(crate) fn resume_in_process(repo: &Repository) -> Result<Option<String>, GitError> {
    let Some(noted) = read_note(repo) else {
        return Ok(None);
    };
    let note_path = repo.commondir().join(CHECKOUT_NOTE);
    release_checkout_index_lock(repo, noted.at);
    let tip = fast_forward::current_tip(repo, &noted.branch_ref)?;
    if tip == Some(noted.to) {
        // Killed after the branch moved: the move is complete.
        let _ = fs::remove_file(&note_path);
        return Ok(None);
    }
    if tip != noted.from {
        let _ = fs::remove_file(&note_path);
        return Ok(Some(format!(
            "an interrupted pull of {} was not finished: the branch was moved since by \
             another command; files it had written are left as they are",
            noted.branch_ref
        )));
    }
    let Some(workdir) = repo.workdir().map(Path::to_path_buf) else {
        let _ = fs::remove_file(&note_path);
        return Ok(None);
    };
    let edited = put_back_touched(repo, &workdir, &noted)?;
    if !edited.is_empty() {
        let _ = fs::remove_file(&note_path);
        return Ok(Some(format!(
            "an interrupted pull was rolled back: {} changed since it stopped",
            edited.join(", ")
        )));
    }
    let moved =
        match fast_forward::move_branch_in_process(repo, &noted.branch_ref, noted.from, noted.to) {
            Ok(moved) => moved,
            // The checkout fails on its own (a path the file system refuses, a folder it may not
            // write): done again it would fail at every sync. Its files are put back as in the old
            // tip and the note goes, so the next sync starts clean and says what is wrong.
            Err(err) => {
                put_back_touched(repo, &workdir, &noted)?;
                let _ = fs::remove_file(&note_path);
                return Ok(Some(format!(
                    "an interrupted pull could not be finished ({err}) and was rolled back"
                )));
            }
        };
    let _ = fs::remove_file(&note_path);
    Ok(Some(match moved {
        BranchMove::Moved { .. } => "finished a pull that an earlier sync left half-done".into(),
        BranchMove::Blocked { paths } => format!(
            "an interrupted pull was rolled back: {} in the way",
            paths.join(", ")
        ),
        other => format!("an interrupted pull was rolled back ({other:?})"),
    }))
}

/// Puts every file the noted checkout touched back as in the old tip, and their index
/// entries; a file changed since (a person's edit) stays. Returns those edited files.
fn put_back_touched(
    repo: &Repository,
    workdir: &Path,
    noted: &Noted,
) -> Result<Vec<String>, GitError> {
    let git = |what: &str, e: git2::Error| GitError::git(format!("{what} (interrupted pull)"), e);
    let to_tree = repo
        .find_commit(noted.to)
        .and_then(|c| c.tree())
        .map_err(|e| git("reading the pulled commit", e))?;
    let from_tree = match noted.from {
        Some(from) => Some(
            repo.find_commit(from)
                .and_then(|c| c.tree())
                .map_err(|e| git("reading the old tip", e))?,
        ),
        None => None,
    };
    let diff = repo
        .diff_tree_to_tree(from_tree.as_ref(), Some(&to_tree), None)
        .map_err(|e| git("comparing the tips", e))?;
    let mut files = Vec::new();
    // The modes from the tree entries: git2's `DiffFile::mode` panics on a crafted one.
    let mut from_modes = SideModes::new(repo, from_tree.as_ref());
    let mut to_modes = SideModes::new(repo, Some(&to_tree));
    for delta in diff.deltas() {
        let side = |modes: &mut SideModes<'_>, f: git2::DiffFile<'_>| {
            (!f.id().is_zero()).then(|| {
                let mode = modes.mode(&f).unwrap_or(0o100644);
                (f.id(), crate::git::tree_entries::file_mode(mode))
            })
        };
        let (from, to) = (
            side(&mut from_modes, delta.old_file()),
            side(&mut to_modes, delta.new_file()),
        );
        let Some(path) = delta.new_file().path().or(delta.old_file().path()) else {
            continue;
        };
        let Some(rel) = path.to_str() else { continue };
        let state = on_disk(repo, &workdir.join(path), from, to);
        files.push((rel.to_string(), from, to, state));
    }
    let edited: Vec<String> = files
        .iter()
        .filter(|(_, _, _, s)| *s == OnDisk::Edited)
        .map(|(p, ..)| p.clone())
        .collect();
    // Back to the old tip's state for every file the dead checkout touched; the edited ones
    // are a person's and stay. The index is put back too (libgit2 may have written it).
    for (rel, from, to, state) in &files {
        let abs = workdir.join(rel);
        let ours = matches!(state, OnDisk::CutShort | OnDisk::Missing | OnDisk::AsTo);
        if ours && (from.is_some() || to.is_some()) {
            put_back(repo, &abs, *from)?;
        }
    }
    reset_index_entries(repo, &files)?;
    Ok(edited)
}

/// How the file at `abs` stands against the old (`from`) and new (`to`) blob.
fn on_disk(
    repo: &Repository,
    abs: &Path,
    from: Option<(Oid, FileMode)>,
    to: Option<(Oid, FileMode)>,
) -> OnDisk {
    let meta = match fs::symlink_metadata(abs) {
        Ok(meta) => meta,
        Err(_) => {
            return match (from, to) {
                (None, _) => OnDisk::AsFrom,
                (_, None) => OnDisk::AsTo,
                _ => OnDisk::Missing,
            };
        }
    };
    let bytes = if meta.file_type().is_symlink() {
        match fs::read_link(abs) {
            Ok(target) => target.into_os_string().into_encoded_bytes(),
            Err(_) => return OnDisk::Edited,
        }
    } else if meta.is_file() {
        match fs::read(abs) {
            Ok(bytes) => bytes,
            Err(_) => return OnDisk::Edited,
        }
    } else {
        return OnDisk::Edited;
    };
    let ids = [Some(&bytes[..]), without_cr(&bytes).as_deref()]
        .into_iter()
        .flatten()
        .filter_map(|b| Oid::hash_object(ObjectType::Blob, b).ok())
        .collect::<Vec<_>>();
    if to.is_some_and(|(id, _)| ids.contains(&id)) {
        return OnDisk::AsTo;
    }
    if from.is_some_and(|(id, _)| ids.contains(&id)) {
        return OnDisk::AsFrom;
    }
    if let Some((id, _)) = to {
        if let Ok(blob) = repo.find_blob(id) {
            if blob.content().starts_with(&bytes) || with_cr(blob.content()).starts_with(&bytes) {
                return OnDisk::CutShort;
            }
        }
    }
    OnDisk::Edited
}

/// The bytes with CRLF turned into LF, when they hold any (a checkout with `core.autocrlf`).
fn without_cr(bytes: &[u8]) -> Option<Vec<u8>> {
    bytes.windows(2).any(|w| w == b"\r\n").then(|| {
        let mut out = Vec::with_capacity(bytes.len());
        for (i, &b) in bytes.iter().enumerate() {
            if !(b == b'\r' && bytes.get(i + 1) == Some(&b'\n')) {
                out.push(b);
            }
        }
        out
    })
}

fn with_cr(bytes: &[u8]) -> Vec<u8> {
    let mut out = Vec::with_capacity(bytes.len() + bytes.len() / 32);
    for &b in bytes {
        if b == b'\n' {
            out.push(b'\r');
        }
        out.push(b);
    }
    out
}

/// Writes the old tip's version of a file back (or removes it, when the old tip lacks it).
fn put_back(repo: &Repository, abs: &Path, from: Option<(Oid, FileMode)>) -> Result<(), GitError> {
    if let Ok(meta) = fs::symlink_metadata(abs) {
        if meta.is_dir() {
            // Not a file the dead checkout wrote: leave it.
            return Ok(());
        }
        fs::remove_file(abs).map_err(|e| GitError::io(abs, e))?;
    }
    let Some((id, mode)) = from else {
        return Ok(());
    };
    let blob = repo
        .find_blob(id)
        .map_err(|e| GitError::git(format!("reading {}", abs.display()), e))?;
    if let Some(parent) = abs.parent() {
        fs::create_dir_all(parent).map_err(|e| GitError::io(parent, e))?;
    }
    if mode == FileMode::Link {
        let target = <std::ffi::OsStr as std::os::unix::ffi::OsStrExt>::from_bytes(blob.content());
        std::os::unix::fs::symlink(target, abs).map_err(|e| GitError::io(abs, e))?;
        return Ok(());
    }
    fs::write(abs, blob.content()).map_err(|e| GitError::io(abs, e))?;
    if mode == FileMode::BlobExecutable {
        use std::os::unix::fs::PermissionsExt;
        let _ = fs::set_permissions(abs, fs::Permissions::from_mode(0o755));
    }
    Ok(())
}

/// Gives the files the move changes their old tip's index entries again, when the dead
/// checkout had written the index already.
fn reset_index_entries(repo: &Repository, files: &[PulledFile]) -> Result<(), GitError> {
    let git = |e| GitError::git("putting the index back (interrupted pull)", e);
    let mut index = repo.index().map_err(git)?;
    let mut changed = false;
    for (rel, from, _, state) in files {
        if *state == OnDisk::Edited {
            continue;
        }
        let current = index.get_path(Path::new(rel), 0).map(|e| e.id);
        let wanted = from.map(|(id, _)| id);
        if current == wanted {
            continue;
        }
        changed = true;
        match from {
            Some((id, mode)) => {
                let entry = git2::IndexEntry {
                    ctime: git2::IndexTime::new(0, 0),
                    mtime: git2::IndexTime::new(0, 0),
                    dev: 0,
                    ino: 0,
                    mode: u32::from(*mode),
                    uid: 0,
                    gid: 0,
                    file_size: 0,
                    id: *id,
                    flags: 0,
                    flags_extended: 0,
                    path: rel.as_bytes().to_vec(),
                };
                index.add(&entry).map_err(git)?;
            }
            None => index.remove_path(Path::new(rel)).map_err(git)?,
        }
    }
    if changed {
        index.write().map_err(git)?;
    }
    Ok(())
}

/// Removes `index.lock` when it is the dead checkout's: made after the note, holding nothing
/// or the start of an index (`DIRC`), unchanged for [`STILL_FOR`].
fn release_checkout_index_lock(repo: &Repository, noted: Option<SystemTime>) {
    let lock = repo.path().join("index.lock");
    let Ok(first) = fs::symlink_metadata(&lock) else {
        return;
    };
    let after_note = match (first.modified(), noted) {
        (Ok(made), Some(noted)) => made >= noted,
        _ => false,
    };
    let looks_like_index = |path: &Path| {
        fs::read(path).is_ok_and(|b| b.is_empty() || b"DIRC".starts_with(&b[..b.len().min(4)]))
    };
    if !first.is_file() || !after_note || !looks_like_index(&lock) {
        return;
    }
    std::thread::sleep(STILL_FOR);
    if let Ok(now) = fs::symlink_metadata(&lock) {
        if now.len() == first.len() && now.modified().ok() == first.modified().ok() {
            let _ = fs::remove_file(&lock);
        }
    }
}
