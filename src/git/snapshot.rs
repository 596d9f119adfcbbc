//! Baseline snapshots: a memory folder's files recorded as one parentless commit, and read back.
//!
//! Private and user baselines live in a bare repository of their own that is rebuilt from
//! scratch on every commit, so it never holds more than the current snapshot: forgotten content
//! is not left behind in old commits or loose objects. The team baseline is a ref in the project
//! repository, updated with compare-and-swap; it never touches branches, `HEAD` or the index.

use std::collections::BTreeMap;
use std::fs;
use std::path::{Path, PathBuf};

use git2::{ObjectType, Oid, Repository, Signature};

use super::GitError;

/// The branch a private or user baseline repository keeps its one commit on.
pub const BARE_BASELINE_REF: &str = "refs/heads/baseline";

/// One file to record.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SnapshotFile {
    /// Path relative to the snapshot root, `/`-separated.
    pub path: String,
    /// Git file mode (`0o100644` or `0o100755`).
    pub mode: u32,
    /// The content.
    pub bytes: Vec<u8>,
}

/// One file of a recorded baseline.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct BaselineEntry {
    /// The blob id.
    pub oid: Oid,
    /// Git file mode.
    pub mode: u32,
}

/// A baseline's files by path.
pub type BaselineTree = BTreeMap<String, BaselineEntry>;

/// The blob id git would give `bytes`, computed without writing anything to an object store.
pub fn blob_id(bytes: &[u8]) -> Result<Oid, GitError> {
    Oid::hash_object(ObjectType::Blob, bytes).map_err(|e| GitError::git("hashing a file", e))
}

/// Opens a baseline bare repository; `Ok(None)` when it does not exist yet.
pub fn open_bare(path: &Path) -> Result<Option<Repository>, GitError> {
    if !path.exists() {
        return Ok(None);
    }
    Repository::open_bare(path)
        .map(Some)
        .map_err(|e| GitError::git(format!("opening the baseline at {}", path.display()), e))
}

/// The files of the commit at `refname`; `Ok(None)` when the ref does not exist.
pub fn read_baseline(repo: &Repository, refname: &str) -> Result<Option<BaselineTree>, GitError> {
    let reference = match repo.find_reference(refname) {
        Ok(r) => r,
        Err(e) if e.code() == git2::ErrorCode::NotFound => return Ok(None),
        Err(e) => return Err(GitError::git(format!("reading {refname}"), e)),
    };
    let tree = reference
        .peel_to_tree()
        .map_err(|e| GitError::git(format!("reading the tree of {refname}"), e))?;
    let mut files = BaselineTree::new();
    let mut failure = None;
    tree.walk(git2::TreeWalkMode::PreOrder, |dir, entry| {
        if entry.kind() == Some(ObjectType::Blob) {
            match entry.name() {
                Ok(name) => {
                    files.insert(
                        format!("{dir}{name}"),
                        BaselineEntry {
                            oid: entry.id(),
                            mode: entry.filemode() as u32,
                        },
                    );
                }
                Err(_) => failure = Some(format!("{dir}: a file name that is not UTF-8")),
            }
        }
        git2::TreeWalkResult::Ok
    })
    .map_err(|e| GitError::git(format!("walking {refname}"), e))?;
    if let Some(what) = failure {
        return Err(GitError::git(
            format!("reading {refname}"),
            git2::Error::from_str(&what),
        ));
    }
    Ok(Some(files))
}

/// The content of a blob.
pub fn read_blob(repo: &Repository, oid: Oid) -> Result<Vec<u8>, GitError> {
    repo.find_blob(oid)
        .map(|b| b.content().to_vec())
        .map_err(|e| GitError::git(format!("reading blob {oid}"), e))
}

/// The commit id at `refname`, if any.
pub fn ref_target(repo: &Repository, refname: &str) -> Result<Option<Oid>, GitError> {
    match repo.find_reference(refname) {
        Ok(r) => Ok(r.target()),
        Err(e) if e.code() == git2::ErrorCode::NotFound => Ok(None),
        Err(e) => Err(GitError::git(format!("reading {refname}"), e)),
    }
}

enum Node {
    File(Oid, u32),
    Dir(BTreeMap<String, Node>),
}

/// Writes the files' blobs and trees and one parentless commit; moves no ref.
fn write_commit(repo: &Repository, files: &[SnapshotFile]) -> Result<Oid, GitError> {
    let mut root: BTreeMap<String, Node> = BTreeMap::new();
    for file in files {
        let oid = repo
            .blob(&file.bytes)
            .map_err(|e| GitError::git(format!("writing {}", file.path), e))?;
        let mut dir = &mut root;
        let parts: Vec<&str> = file.path.split('/').collect();
        for part in &parts[..parts.len() - 1] {
            let node = dir
                .entry(part.to_string())
                .or_insert_with(|| Node::Dir(BTreeMap::new()));
            dir = match node {
                Node::Dir(children) => children,
                Node::File(..) => {
                    return Err(GitError::git(
                        format!("recording {}", file.path),
                        git2::Error::from_str("a file and a folder share a name"),
                    ));
                }
            };
        }
        dir.insert(
            parts[parts.len() - 1].to_string(),
            Node::File(oid, file.mode),
        );
    }
    let tree = write_tree(repo, &root)?;
    let tree = repo
        .find_tree(tree)
        .map_err(|e| GitError::git("reading the new baseline tree", e))?;
    // A fixed identity: the baseline is teammem's bookkeeping, and the repository may have no
    // user configured at all.
    let who = Signature::now("teammem", "teammem@localhost")
        .map_err(|e| GitError::git("making the baseline signature", e))?;
    repo.commit(None, &who, &who, "teammem baseline\n", &tree, &[])
        .map_err(|e| GitError::git("writing the baseline commit", e))
}

fn write_tree(repo: &Repository, dir: &BTreeMap<String, Node>) -> Result<Oid, GitError> {
    let mut builder = repo
        .treebuilder(None)
        .map_err(|e| GitError::git("building a baseline tree", e))?;
    for (name, node) in dir {
        let (oid, mode) = match node {
            Node::File(oid, mode) => (*oid, *mode as i32),
            Node::Dir(children) => (write_tree(repo, children)?, 0o040000),
        };
        builder
            .insert(name, oid, mode)
            .map_err(|e| GitError::git(format!("adding {name} to a baseline tree"), e))?;
    }
    builder
        .write()
        .map_err(|e| GitError::git("writing a baseline tree", e))
}

/// Writes the snapshot's objects into memory first and then into the repository as a single
/// pack: ten thousand memories make one file, not ten thousand loose objects.
fn write_as_one_pack(repo: &Repository, files: &[SnapshotFile]) -> Result<Oid, GitError> {
    use std::io::Write;
    let odb = repo
        .odb()
        .map_err(|e| GitError::git("opening the baseline's object store", e))?;
    // Above the default backends' priorities, so every write lands in memory.
    let mempack = odb
        .add_new_mempack_backend(1000)
        .map_err(|e| GitError::git("preparing an in-memory object store", e))?;
    let commit = write_commit(repo, files)?;
    let mut pack = git2::Buf::new();
    mempack
        .dump(repo, &mut pack)
        .map_err(|e| GitError::git("packing the baseline", e))?;
    let mut writer = odb
        .packwriter()
        .map_err(|e| GitError::git("writing the baseline pack", e))?;
    writer.write_all(&pack).map_err(|e| {
        GitError::git(
            "writing the baseline pack",
            git2::Error::from_str(&e.to_string()),
        )
    })?;
    writer
        .commit()
        .map_err(|e| GitError::git("indexing the baseline pack", e))?;
    Ok(commit)
}

/// Replaces the bare repository at `path` with a new one holding only `files` in one
/// parentless commit. The new repository is built beside the old one and renamed into place,
/// so a failure leaves the old baseline as it was.
pub fn replace_bare_repo(path: &Path, files: &[SnapshotFile]) -> Result<Oid, GitError> {
    let sibling = |tag: &str| -> PathBuf {
        let name = path
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_else(|| "baseline.git".into());
        path.with_file_name(format!(".{name}.{tag}-{}", std::process::id()))
    };
    let fresh = sibling("new");
    let io = |what: &str, e: std::io::Error| {
        GitError::git(
            format!("{what} {}", path.display()),
            git2::Error::from_str(&e.to_string()),
        )
    };
    if let Some(parent) = path.parent() {
        fs::create_dir_all(parent).map_err(|e| io("creating the folder of", e))?;
    }
    let _ = fs::remove_dir_all(&fresh);
    let built = (|| {
        let repo = Repository::init_bare(&fresh)
            .map_err(|e| GitError::git(format!("creating {}", fresh.display()), e))?;
        let commit = write_as_one_pack(&repo, files)?;
        repo.reference(BARE_BASELINE_REF, commit, true, "teammem baseline")
            .map_err(|e| GitError::git("setting the baseline branch", e))?;
        repo.set_head(BARE_BASELINE_REF)
            .map_err(|e| GitError::git("pointing HEAD at the baseline", e))?;
        Ok(commit)
    })();
    let commit = match built {
        Ok(c) => c,
        Err(e) => {
            let _ = fs::remove_dir_all(&fresh);
            return Err(e);
        }
    };
    let old = sibling("old");
    if path.exists() {
        fs::rename(path, &old).map_err(|e| io("moving aside", e))?;
    }
    if let Err(e) = fs::rename(&fresh, path) {
        let _ = fs::rename(&old, path);
        return Err(io("moving into place", e));
    }
    let _ = fs::remove_dir_all(&old);
    Ok(commit)
}

/// Records `files` as the team baseline: a parentless commit at `refname`, moved only if the ref
/// still points where it pointed when the diff was made (`expected`, `None` for absent).
pub fn set_ref_snapshot(
    repo: &Repository,
    refname: &str,
    files: &[SnapshotFile],
    expected: Option<Oid>,
) -> Result<Oid, GitError> {
    let commit = write_commit(repo, files)?;
    let result = match expected {
        Some(old) => repo.reference_matching(refname, commit, true, old, "teammem baseline"),
        None => repo.reference(refname, commit, false, "teammem baseline"),
    };
    result.map_err(|e| GitError::git(format!("moving {refname} (did another run move it?)"), e))?;
    Ok(commit)
}
