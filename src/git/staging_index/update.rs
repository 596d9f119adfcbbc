//! Bringing the index's team entries in line with a commit, leaving every other entry exactly
//! as it was (invariant 2: the user's staged changes outside the team folder survive).
//!
//! The new index is built in a side file — the bytes of `.git/index` with the team entries
//! spliced in ([`splice`]), or, for index forms that leaves alone, a copy of it rewritten
//! by libgit2 — then put in place under git's own `index.lock`, and only if `.git/index` did not
//! change since it was read. git
//! writes its index the same way; the differences: the lock is held for microseconds instead of
//! the whole build, and it is a hard link of the side file, so a sync killed while holding it
//! leaves a lock the next sync can prove is its own and remove ([`release_abandoned_lock`]).
//! libgit2 also "truncates racily clean entries" when writing an index it owns; a side index has
//! no owner, so entries outside the team folder keep their stat data byte for byte.

use std::borrow::Cow;
use std::collections::{BTreeMap, HashMap};
use std::fs;
use std::io::{self, Write};
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use git2::{Index, IndexEntry, IndexTime, Oid, Repository, Tree};

use super::git_cli;
use super::splice;
use crate::domain::store::FileStamp;
use crate::git::GitError;
use crate::git::status::{self, TreeFile};

/// What happened to the index.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum StagingUpdate {
    /// Its team entries already matched.
    Unchanged,
    /// Its team entries were updated.
    Written,
    /// Another git process held `index.lock` (or kept rewriting the index); nothing was written.
    Locked,
}

/// A work-tree file just stored as a blob: its id, and its stamp from before it was read.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct FreshFile {
    /// The blob the file's content was stored as.
    pub id: Oid,
    /// The file's stamp (of its own metadata, symlinks not followed) taken before reading it.
    pub stamp: FileStamp,
}

use crate::git::recovery::SIDE_INDEX;

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
) -> Result<StagingUpdate, GitError> {
    let git_dir = repo.path();
    let workdir = repo.workdir().unwrap_or(git_dir);
    let index_path = git_dir.join("index");
    let side = git_dir.join(SIDE_INDEX);
    let desired = status::index_files(repo, tree, dir)?;
    let sha1 = repo.object_format() == git2::ObjectFormat::Sha1;
    release_abandoned_lock(repo)?;
    for _ in 0..3 {
        remove_if_there(&side)?;
        remove_if_there(&side.with_extension("next.lock"))?;
        let before = identity(&index_path);
        let spliced = match sha1 {
            true => splice(&index_path, &side, workdir, dir, &desired, fresh)?,
            false => None,
        };
        let changed = match spliced {
            Some(changed) => changed,
            None => match rebuild_with_libgit2(&index_path, &side, workdir, dir, &desired, fresh) {
                // A split or sparse index: git itself updates it, in its own form.
                Err(err) if git_cli::libgit2_cannot_read(&err) => {
                    remove_if_there(&side)?;
                    return git_cli::update_team_entries(repo, dir, &desired, patience);
                }
                other => other?,
            },
        };
        if !changed {
            remove_if_there(&side)?;
            return Ok(StagingUpdate::Unchanged);
        }
        let lock = git_dir.join("index.lock");
        // The lock is taken by hard-linking the finished side file as `index.lock`, and given
        // back by renaming it over the index: the new index lands and the lock goes in one step.
        if !take_lock(&side, &lock, patience)? {
            remove_if_there(&side)?;
            return Ok(StagingUpdate::Locked);
        }
        if !same_version(identity(&index_path), before) {
            // Someone staged something while we worked: start again from their index.
            remove_if_there(&lock)?;
            continue;
        }
        fs::rename(&lock, &index_path).map_err(|e| GitError::io(&index_path, e))?;
        remove_if_there(&side)?;
        return Ok(StagingUpdate::Written);
    }
    remove_if_there(&side)?;
    Ok(StagingUpdate::Locked)
}

/// Writes the new index to `side` by splicing the folder's entries into the bytes of the index
/// ([`splice`]): the cost is reading and hashing the file, whatever its size. Returns
/// whether anything changed, or `None` when the index's form is left to libgit2.
fn splice(
    index_path: &Path,
    side: &Path,
    workdir: &Path,
    dir: &str,
    desired: &BTreeMap<String, TreeFile>,
    fresh: &HashMap<String, FreshFile>,
) -> Result<Option<bool>, GitError> {
    // Read whole rather than mapped: a file truncated in place by another program while
    // mapped would end the process (SIGBUS), a read gives what it held.
    let bytes = match fs::read(index_path) {
        Ok(bytes) if !bytes.is_empty() => bytes,
        // No index yet, or an empty file: libgit2 starts an empty one or reports it.
        Ok(_) => return Ok(None),
        Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(None),
        Err(e) => return Err(GitError::io(index_path, e)),
    };
    let bytes: &[u8] = &bytes;
    let prefix = format!("{dir}/");
    let Ok(split) = splice::split(bytes, prefix.as_bytes()) else {
        return Ok(None);
    };
    let current: HashMap<&[u8], &splice::FolderEntry<'_>> = split
        .entries()
        .iter()
        .filter(|e| e.stage == 0)
        .map(|e| (e.path, e))
        .collect();
    let mut changed = split.entries().len() != desired.len();
    let mut entries: Vec<Cow<'_, [u8]>> = Vec::with_capacity(desired.len());
    for (path, file) in desired {
        match current.get(path.as_bytes()) {
            Some(entry) if entry.id == file.id.as_bytes() && entry.mode == u32::from(file.mode) => {
                entries.push(Cow::Borrowed(entry.raw));
            }
            _ => {
                changed = true;
                let stamp = stamp_for(workdir, path, file, fresh.get(path));
                let entry = splice::encode_entry(
                    path.as_bytes(),
                    u32::from(file.mode),
                    file.id.as_bytes(),
                    &stamp,
                );
                entries.push(Cow::Owned(entry));
            }
        }
    }
    if !changed {
        return Ok(Some(false));
    }
    let entries: Vec<&[u8]> = entries.iter().map(|e| e.as_ref()).collect();
    let pieces = split
        .pieces(&entries, dir)
        .map_err(|e| GitError::io(side, e))?;
    let file = fs::File::create(side).map_err(|e| GitError::io(side, e))?;
    let parallel = bytes.len() >= PARALLEL_FROM;
    let (written, intact) = write_side(&file, &split, &pieces, bytes, parallel);
    written.map_err(|e| GitError::io(side, e))?;
    if !intact {
        // libgit2 reads it again and reports the damage.
        remove_if_there(side)?;
        return Ok(None);
    }
    Ok(Some(true))
}

/// Writes `pieces` and their trailer to `file`, and checks the old index `bytes`' checksum.
/// Returns the write's result and whether the old checksum matched.
fn write_side(
    file: &fs::File,
    split: &splice::FolderSplice<'_>,
    pieces: &[Cow<'_, [u8]>],
    bytes: &[u8],
    parallel: bool,
) -> (io::Result<()>, bool) {
    if !parallel {
        let written = write_pieces(file, pieces).and_then(|()| {
            let mut file = file;
            file.write_all(&split.trailer(pieces))
        });
        return (written, splice::checksum_ok(bytes));
    }
    // Three jobs of a few milliseconds each in a large index: checking the old file's checksum,
    // hashing the new file, and writing it. They do not depend on each other until the
    // trailer, so they run side by side.
    std::thread::scope(|scope| {
        let check = scope.spawn(|| splice::checksum_ok(bytes));
        let hash = scope.spawn(|| split.trailer(pieces));
        let written = write_pieces(file, pieces).and_then(|()| {
            let trailer = hash
                .join()
                .map_err(|_| io::Error::other("the thread hashing the index stopped"))?;
            let mut file = file;
            file.write_all(&trailer)
        });
        (written, check.join().unwrap_or(false))
    })
}

/// The index size from which the new index is hashed, written and the old one checked on
/// separate threads.
const PARALLEL_FROM: usize = 1024 * 1024;

fn write_pieces(file: &fs::File, pieces: &[Cow<'_, [u8]>]) -> io::Result<()> {
    let mut out = io::BufWriter::with_capacity(64 * 1024, file);
    for piece in pieces {
        out.write_all(piece)?;
    }
    out.flush()
}

/// Writes the new index to `side` through libgit2, from a copy of the index: for the forms
/// [`splice`] leaves alone. Returns whether anything changed.
fn rebuild_with_libgit2(
    index_path: &Path,
    side: &Path,
    workdir: &Path,
    dir: &str,
    desired: &BTreeMap<String, TreeFile>,
    fresh: &HashMap<String, FreshFile>,
) -> Result<bool, GitError> {
    match fs::copy(index_path, side) {
        Ok(_) => {}
        Err(e) if e.kind() == io::ErrorKind::NotFound => {}
        Err(e) => return Err(GitError::io(side, e)),
    }
    let mut index =
        Index::open(side).map_err(|e| GitError::git("reading a copy of the index", e))?;
    if !reconcile(&mut index, workdir, dir, desired, fresh)? {
        return Ok(false);
    }
    index
        .write()
        .map_err(|e| GitError::git("writing the new index", e))?;
    Ok(true)
}

/// Removes an `index.lock` left by a sync that was killed while it held it. Ownership is
/// proven, not guessed: such a lock is a hard link of the side file (same inode), which no
/// other program creates. Call it only while holding the sync lock.
pub fn release_abandoned_lock(repo: &Repository) -> Result<bool, GitError> {
    let lock = repo.path().join("index.lock");
    let side = repo.path().join(SIDE_INDEX);
    let same_file = match (fs::symlink_metadata(&lock), fs::symlink_metadata(&side)) {
        (Ok(l), Ok(s)) => FileStamp::of(&l).same_file(&FileStamp::of(&s)),
        _ => false,
    };
    if same_file {
        remove_if_there(&lock)?;
        remove_if_there(&side)?;
    }
    Ok(same_file)
}

/// Removes a file; one that is already gone is fine.
pub(in crate::git) fn remove_if_there(path: &Path) -> Result<(), GitError> {
    match fs::remove_file(path) {
        Ok(()) => Ok(()),
        Err(e) if e.kind() == io::ErrorKind::NotFound => Ok(()),
        Err(e) => Err(GitError::io(path, e)),
    }
}

/// Takes `index.lock` by hard-linking `side` to it (exclusive, like git's own create), waiting up
/// to `patience` for another process to release it.
fn take_lock(side: &Path, lock: &Path, patience: Duration) -> Result<bool, GitError> {
    let start = Instant::now();
    loop {
        match fs::hard_link(side, lock) {
            Ok(()) => return Ok(true),
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

/// The stamp of the index file, to tell one version of it from another
/// ([`FileStamp::same_version`]): git replaces it by rename.
fn identity(path: &Path) -> Option<FileStamp> {
    fs::metadata(path).ok().map(|meta| FileStamp::of(&meta))
}

/// Whether two [`identity`] results are of the same version of the index (both absent
/// included).
fn same_version(a: Option<FileStamp>, b: Option<FileStamp>) -> bool {
    match (a, b) {
        (Some(a), Some(b)) => a.same_version(&b),
        (None, None) => true,
        _ => false,
    }
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
        let entry = index_entry(path, file, &stamp_for(workdir, path, file, fresh.get(path)));
        index
            .add(&entry)
            .map_err(|e| GitError::git(format!("updating the index entry of {path}"), e))?;
        changed = true;
    }
    Ok(changed)
}

/// The stat data for the index entry of a committed file: the file's on disk when its content
/// is the committed one, and otherwise none ([`FileStamp::default`]).
fn stamp_for(workdir: &Path, path: &str, file: &TreeFile, fresh: Option<&FreshFile>) -> FileStamp {
    let abs: PathBuf = workdir.join(path);
    let Ok(meta) = fs::symlink_metadata(&abs) else {
        return FileStamp::default();
    };
    let stamp = FileStamp::of(&meta);
    let same = match fresh {
        Some(fresh) if fresh.id == file.id => stamp == fresh.stamp,
        _ => raw_matches(&abs, &meta, file.id),
    };
    if same { stamp } else { FileStamp::default() }
}

/// The libgit2 index entry of a committed file with the stat data `stamp`, as
/// [`splice::encode_entry`] writes it.
fn index_entry(path: &str, file: &TreeFile, stamp: &FileStamp) -> IndexEntry {
    let [
        ctime_s,
        ctime_ns,
        mtime_s,
        mtime_ns,
        dev,
        ino,
        mode,
        uid,
        gid,
        file_size,
    ] = stamp.index_words(u32::from(file.mode));
    IndexEntry {
        ctime: IndexTime::new(ctime_s as i32, ctime_ns),
        mtime: IndexTime::new(mtime_s as i32, mtime_ns),
        dev,
        ino,
        mode,
        uid,
        gid,
        file_size,
        id: file.id,
        flags: 0,
        flags_extended: 0,
        path: path.as_bytes().to_vec(),
    }
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_threaded_and_the_plain_write_give_the_same_index() {
        let dir = tempfile::tempdir().unwrap();
        let git = |args: &[&str]| crate::git::git_cli(dir.path(), args);
        git(&["init", "-q"]);
        for f in [
            "a.txt",
            ".qwen/team-memory/MEMORY.md",
            ".qwen/team-memory/p/b.md",
            "z.txt",
        ] {
            let path = dir.path().join(f);
            fs::create_dir_all(path.parent().unwrap()).unwrap();
            fs::write(path, f).unwrap();
        }
        git(&["add", "-A"]);
        let bytes = fs::read(dir.path().join(".git/index")).unwrap();
        let split = splice::split(&bytes, b".qwen/team-memory/").unwrap();
        let kept: Vec<&[u8]> = vec![split.entries()[1].raw];
        let pieces = split.pieces(&kept, ".qwen/team-memory").unwrap();
        let mut written = Vec::new();
        for parallel in [false, true] {
            let path = dir.path().join(format!("side-{parallel}"));
            let file = fs::File::create(&path).unwrap();
            let (result, intact) = write_side(&file, &split, &pieces, &bytes, parallel);
            result.unwrap();
            assert!(intact);
            written.push(fs::read(&path).unwrap());
        }
        let mut expected = Vec::new();
        split
            .write_to(&mut expected, &kept, ".qwen/team-memory")
            .unwrap();
        assert_eq!(written, [expected.clone(), expected.clone()]);
        assert!(splice::checksum_ok(&expected));
        assert_eq!(expected.len(), bytes.len() - split.entries()[0].raw.len());
    }

    #[test]
    fn only_a_lock_proven_ours_is_released() {
        let dir = tempfile::tempdir().unwrap();
        let repo = Repository::init(dir.path()).unwrap();
        let lock = repo.path().join("index.lock");
        let side = repo.path().join(SIDE_INDEX);

        fs::write(&lock, "another git process").unwrap();
        fs::write(&side, "a side index").unwrap();
        assert!(!release_abandoned_lock(&repo).unwrap());
        assert!(lock.exists());

        fs::remove_file(&lock).unwrap();
        fs::hard_link(&side, &lock).unwrap();
        assert!(release_abandoned_lock(&repo).unwrap());
        assert!(!lock.exists() && !side.exists());
    }
}
