//! Bringing the index's team entries in line with a commit, leaving every other entry exactly
//! as it was (invariant 2: the user's staged changes outside the team folder survive).
//!
//! The new index is built in a side file from a copy of `.git/index`, then put in place under
//! git's own `index.lock`, and only if `.git/index` did not change since it was copied. git
//! writes its index the same way; the difference is that the lock is held for microseconds
//! instead of the whole build, so a sync killed at any moment leaves no stale `index.lock`.
//! libgit2 also "truncates racily clean entries" when writing an index it owns; a side index has
//! no owner, so entries outside the team folder keep their stat data byte for byte.

use std::collections::{BTreeMap, HashMap};
use std::fs;
use std::io;
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use git2::{Index, IndexEntry, IndexTime, Oid, Repository, Tree};

use super::GitError;
use super::status::{self, TreeFile};

/// What happened to the index.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum IndexUpdate {
    /// Its team entries already matched.
    Unchanged,
    /// Its team entries were updated.
    Written,
    /// Another git process held `index.lock` (or kept rewriting the index); nothing was written.
    Locked,
}

/// The stat data that tells whether a file changed since it was read.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct FileStamp {
    size: u64,
    ino: u64,
    mtime: (i64, i64),
    ctime: (i64, i64),
}

impl FileStamp {
    /// The stamp of a file's (not followed) metadata.
    pub fn of(meta: &fs::Metadata) -> FileStamp {
        FileStamp {
            size: meta.size(),
            ino: meta.ino(),
            mtime: (meta.mtime(), meta.mtime_nsec()),
            ctime: (meta.ctime(), meta.ctime_nsec()),
        }
    }
}

/// A work-tree file just stored as a blob: its id, and its stamp from before it was read.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct FreshFile {
    /// The blob the file's content was stored as.
    pub id: Oid,
    /// The file's stamp taken before reading it.
    pub stamp: FileStamp,
}

/// The side file the new index is built in (in the worktree's git folder). Only the holder of
/// the sync lock writes it.
const SIDE_INDEX: &str = "teammem-index.next";

/// Makes the index entries under `dir` match `tree`, touching no other entry. `fresh` names the
/// files just stored as blobs; their entries get the file's stat data, so `git status` sees them
/// clean at once, if the file has not changed since it was read. Other entries get the file's
/// stat data only when its raw bytes hash to the blob, and otherwise a zero size, which makes git
/// compare contents instead of trusting the stat data.
pub fn update_team_entries(
    repo: &Repository,
    dir: &str,
    tree: &Tree<'_>,
    fresh: &HashMap<String, FreshFile>,
    patience: Duration,
) -> Result<IndexUpdate, GitError> {
    let git_dir = repo.path();
    let workdir = repo.workdir().unwrap_or(git_dir);
    let index_path = git_dir.join("index");
    let side = git_dir.join(SIDE_INDEX);
    let desired = status::tree_files(repo, Some(tree), dir)?;
    for _ in 0..3 {
        remove_if_there(&side)?;
        remove_if_there(&side.with_extension("next.lock"))?;
        let before = identity(&index_path);
        match fs::copy(&index_path, &side) {
            Ok(_) => {}
            Err(e) if e.kind() == io::ErrorKind::NotFound => {}
            Err(e) => return Err(GitError::io(&side, e)),
        }
        let mut index =
            Index::open(&side).map_err(|e| GitError::git("reading a copy of the index", e))?;
        let changed = reconcile(&mut index, workdir, dir, &desired, fresh)?;
        if !changed {
            remove_if_there(&side)?;
            return Ok(IndexUpdate::Unchanged);
        }
        index
            .write()
            .map_err(|e| GitError::git("writing the new index", e))?;
        let lock = git_dir.join("index.lock");
        if !take_lock(&lock, patience)? {
            remove_if_there(&side)?;
            return Ok(IndexUpdate::Locked);
        }
        if identity(&index_path) != before {
            // Someone staged something while we worked: start again from their index.
            remove_if_there(&lock)?;
            continue;
        }
        let placed = fs::rename(&side, &index_path);
        remove_if_there(&lock)?;
        placed.map_err(|e| GitError::io(&index_path, e))?;
        return Ok(IndexUpdate::Written);
    }
    remove_if_there(&side)?;
    Ok(IndexUpdate::Locked)
}

fn remove_if_there(path: &Path) -> Result<(), GitError> {
    match fs::remove_file(path) {
        Ok(()) => Ok(()),
        Err(e) if e.kind() == io::ErrorKind::NotFound => Ok(()),
        Err(e) => Err(GitError::io(path, e)),
    }
}

/// Creates `index.lock` the way git does (exclusive create), waiting up to `patience` for
/// another process to release it.
fn take_lock(lock: &Path, patience: Duration) -> Result<bool, GitError> {
    let start = Instant::now();
    loop {
        match fs::OpenOptions::new()
            .write(true)
            .create_new(true)
            .open(lock)
        {
            Ok(_) => return Ok(true),
            Err(e) if e.kind() == io::ErrorKind::AlreadyExists => {
                if start.elapsed() >= patience {
                    return Ok(false);
                }
                std::thread::sleep(Duration::from_millis(25));
            }
            Err(e) => return Err(GitError::io(lock, e)),
        }
    }
}

/// What tells one version of the index file from another: git replaces it by rename, so any
/// write changes the inode, and the size and time besides.
fn identity(path: &Path) -> Option<(u64, u64, i64, i64)> {
    let meta = fs::metadata(path).ok()?;
    Some((meta.ino(), meta.len(), meta.mtime(), meta.mtime_nsec()))
}

fn stage(entry: &IndexEntry) -> u16 {
    (entry.flags >> 12) & 0x3
}

/// Applies `desired` to the entries under `dir`; returns whether anything changed.
fn reconcile(
    index: &mut Index,
    workdir: &Path,
    dir: &str,
    desired: &BTreeMap<String, TreeFile>,
    fresh: &HashMap<String, FreshFile>,
) -> Result<bool, GitError> {
    let prefix = format!("{dir}/");
    let mut current: Vec<IndexEntry> = Vec::new();
    if let Ok(start) = index.find_prefix(prefix.as_str()) {
        let mut at = start;
        while let Some(entry) = index.get(at) {
            if !entry.path.starts_with(prefix.as_bytes()) {
                break;
            }
            current.push(entry);
            at += 1;
        }
    }
    let mut kept: HashMap<String, ()> = HashMap::new();
    let mut changed = false;
    for entry in &current {
        let path = String::from_utf8_lossy(&entry.path).into_owned();
        let matches = stage(entry) == 0
            && desired
                .get(&path)
                .is_some_and(|f| f.id == entry.id && u32::from(f.mode) == entry.mode);
        if matches {
            kept.insert(path, ());
            continue;
        }
        index
            .remove(Path::new(&path), i32::from(stage(entry)))
            .map_err(|e| GitError::git(format!("updating the index entry of {path}"), e))?;
        changed = true;
    }
    for (path, file) in desired {
        if kept.contains_key(path) {
            continue;
        }
        let entry = entry_for(workdir, path, file, fresh.get(path))?;
        index
            .add(&entry)
            .map_err(|e| GitError::git(format!("updating the index entry of {path}"), e))?;
        changed = true;
    }
    Ok(changed)
}

/// An index entry for a committed file, with the stat data of the file on disk when its content
/// is the committed one.
fn entry_for(
    workdir: &Path,
    path: &str,
    file: &TreeFile,
    fresh: Option<&FreshFile>,
) -> Result<IndexEntry, GitError> {
    let abs: PathBuf = workdir.join(path);
    let meta = fs::symlink_metadata(&abs).ok();
    let same = match (fresh, &meta) {
        (Some(fresh), Some(meta)) if fresh.id == file.id => FileStamp::of(meta) == fresh.stamp,
        (_, Some(meta)) => raw_matches(&abs, meta, file.id),
        (_, None) => false,
    };
    let mut entry = IndexEntry {
        ctime: IndexTime::new(0, 0),
        mtime: IndexTime::new(0, 0),
        dev: 0,
        ino: 0,
        mode: u32::from(file.mode),
        uid: 0,
        gid: 0,
        file_size: 0,
        id: file.id,
        flags: 0,
        flags_extended: 0,
        path: path.as_bytes().to_vec(),
    };
    if let (true, Some(meta)) = (same, meta) {
        // git keeps 32-bit stat fields; it truncates the same way.
        entry.ctime = IndexTime::new(meta.ctime() as i32, meta.ctime_nsec() as u32);
        entry.mtime = IndexTime::new(meta.mtime() as i32, meta.mtime_nsec() as u32);
        entry.dev = meta.dev() as u32;
        entry.ino = meta.ino() as u32;
        entry.uid = meta.uid();
        entry.gid = meta.gid();
        entry.file_size = meta.size() as u32;
    }
    Ok(entry)
}

fn raw_matches(abs: &Path, meta: &fs::Metadata, id: Oid) -> bool {
    let bytes = if meta.file_type().is_symlink() {
        use std::os::unix::ffi::OsStrExt;
        match fs::read_link(abs) {
            Ok(target) => target.as_os_str().as_bytes().to_vec(),
            Err(_) => return false,
        }
    } else {
        match fs::read(abs) {
            Ok(bytes) => bytes,
            Err(_) => return false,
        }
    };
    Oid::hash_object(git2::ObjectType::Blob, &bytes).is_ok_and(|h| h == id)
}
