//! Reading the files of one folder (the team memory) straight from git objects: from the index
//! that is about to be committed, or from a commit's tree. Only that folder is read, never the
//! whole index or tree, so the cost does not grow with the size of the repository.

use std::path::Path;

use git2::{ObjectType, Oid, Repository, Tree, TreeWalkMode, TreeWalkResult};

use super::GitError;
use super::staging_index::read::{self as index_file, FolderEntries};

/// Git's mode for a symlink.
pub const MODE_SYMLINK: u32 = 0o120000;
/// Git's mode for a submodule (gitlink).
pub const MODE_SUBMODULE: u32 = 0o160000;

/// The folder's files, and any file or symlink that stands where the folder or one of its
/// parents should be (`.qwen` or `.qwen/team-memory` committed as a symlink).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct FolderRead {
    /// The files below the folder.
    pub files: Vec<FolderFile>,
    /// `(path, mode, bytes)` of a non-folder entry at the folder's path or a parent's.
    pub blockers: Vec<(String, u32, Vec<u8>)>,
}

/// One file of the folder, as git stores it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FolderFile {
    /// Path relative to the folder, `/`-separated.
    pub rel: String,
    /// Git's file mode (`0o100644`, `0o100755`, [`MODE_SYMLINK`], [`MODE_SUBMODULE`]).
    pub mode: u32,
    /// The blob id (hex).
    pub id: String,
    /// The blob's bytes (a symlink's target; empty for a submodule).
    pub bytes: Vec<u8>,
    /// For the index: the merge stage (0 when resolved).
    pub stage: u8,
}

/// The files below `folder` in an index file. `index_file` is the index git uses for this run:
/// `$GIT_INDEX_FILE` when git set it (a hook under `git commit -a` or `git commit <path>` sees a
/// temporary index), else the repository's own index. Read with [`index_file`], which skips
/// the rest of the index; libgit2 reads the forms it does not handle.
pub fn staged(
    repo: &Repository,
    index_file: Option<&Path>,
    folder: &str,
) -> Result<FolderRead, GitError> {
    let path = match index_file {
        Some(path) => path.to_path_buf(),
        None => repo.path().join("index"),
    };
    let prefix = format!("{folder}/");
    let id_len = match repo.object_format() {
        git2::ObjectFormat::Sha1 => 20,
        _ => 32,
    };
    let entries = match index_file::folder_entries(&path, prefix.as_bytes(), id_len) {
        Ok(FolderEntries::Read(entries)) => entries,
        // No index yet: nothing is staged.
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(FolderRead::default()),
        Ok(FolderEntries::Unsupported(_)) | Err(_) => {
            return staged_by_libgit2(repo, index_file, &prefix);
        }
    };
    let mut out = FolderRead::default();
    for entry in entries {
        let id = Oid::from_bytes(&entry.id)
            .map_err(|e| GitError::git(format!("reading the index {}", path.display()), e))?;
        let Some(rel) = entry.path.get(prefix.len()..) else {
            let bytes = read_blob(repo, id, entry.mode)?;
            let at = String::from_utf8_lossy(&entry.path).into_owned();
            out.blockers.push((at, entry.mode, bytes));
            continue;
        };
        let rel = String::from_utf8_lossy(rel).into_owned();
        out.files.push(FolderFile {
            bytes: read_blob(repo, id, entry.mode)?,
            rel,
            mode: entry.mode,
            id: id.to_string(),
            stage: entry.stage,
        });
    }
    Ok(out)
}

/// The same through libgit2, for index forms [`index_file`] leaves to it.
fn staged_by_libgit2(
    repo: &Repository,
    index_file: Option<&Path>,
    prefix: &str,
) -> Result<FolderRead, GitError> {
    let index = match index_file {
        Some(path) => git2::Index::open(path)
            .map_err(|e| GitError::git(format!("reading the index {}", path.display()), e))?,
        None => repo
            .index()
            .map_err(|e| GitError::git("reading the index", e))?,
    };
    let mut out = FolderRead::default();
    for ancestor in ancestors(prefix) {
        if let Some(entry) = index.get_path(Path::new(ancestor), 0) {
            let bytes = read_blob(repo, entry.id, entry.mode)?;
            out.blockers.push((ancestor.to_string(), entry.mode, bytes));
        }
    }
    // Entries are sorted by path: jump to the folder and stop after it.
    let start = match index.find_prefix(prefix) {
        Ok(at) => at,
        Err(e) if e.code() == git2::ErrorCode::NotFound => return Ok(out),
        Err(e) => return Err(GitError::git("searching the index", e)),
    };
    for n in start..index.len() {
        let Some(entry) = index.get(n) else { break };
        let Some(rel) = entry.path.strip_prefix(prefix.as_bytes()) else {
            break;
        };
        let rel = String::from_utf8_lossy(rel).into_owned();
        let stage = ((entry.flags >> 12) & 0x3) as u8;
        let bytes = read_blob(repo, entry.id, entry.mode)?;
        out.files.push(FolderFile {
            rel,
            mode: entry.mode,
            id: entry.id.to_string(),
            bytes,
            stage,
        });
    }
    Ok(out)
}

/// `.qwen` and `.qwen/team-memory` for the prefix `.qwen/team-memory/`.
fn ancestors(prefix: &str) -> impl Iterator<Item = &str> {
    prefix.match_indices('/').map(move |(at, _)| &prefix[..at])
}

/// The files below `folder` in the tree of `rev` (any revision git understands).
pub fn at_revision(repo: &Repository, rev: &str, folder: &str) -> Result<FolderRead, GitError> {
    let tree = revision_tree(repo, rev)?;
    let mut blockers = Vec::new();
    for ancestor in ancestors(&format!("{folder}/")) {
        match tree.get_path(Path::new(ancestor)) {
            Ok(entry) if entry.kind() != Some(ObjectType::Tree) => {
                let mode = entry.filemode() as u32;
                blockers.push((
                    ancestor.to_string(),
                    mode,
                    read_blob(repo, entry.id(), mode)?,
                ));
            }
            Ok(_) => {}
            Err(e) if e.code() == git2::ErrorCode::NotFound => {}
            Err(e) => return Err(GitError::git(format!("looking up {ancestor}"), e)),
        }
    }
    Ok(FolderRead {
        files: folder_files(repo, &tree, folder)?,
        blockers,
    })
}

/// The files below `folder` in `tree`.
pub fn folder_files(
    repo: &Repository,
    tree: &Tree<'_>,
    folder: &str,
) -> Result<Vec<FolderFile>, GitError> {
    let Some(sub) = subtree(repo, tree, folder)? else {
        return Ok(Vec::new());
    };
    let mut found: Vec<(String, u32, Oid)> = Vec::new();
    sub.walk(TreeWalkMode::PreOrder, |dir, entry| {
        if entry.kind() != Some(ObjectType::Tree) {
            let name = String::from_utf8_lossy(entry.name_bytes());
            found.push((format!("{dir}{name}"), entry.filemode() as u32, entry.id()));
        }
        TreeWalkResult::Ok
    })
    .map_err(|e| GitError::git(format!("reading {folder}"), e))?;
    let mut out = Vec::with_capacity(found.len());
    for (rel, mode, id) in found {
        out.push(FolderFile {
            bytes: read_blob(repo, id, mode)?,
            rel,
            mode,
            id: id.to_string(),
            stage: 0,
        });
    }
    out.sort_by(|a, b| a.rel.as_bytes().cmp(b.rel.as_bytes()));
    Ok(out)
}

/// The tree of a revision.
pub fn revision_tree<'r>(repo: &'r Repository, rev: &str) -> Result<Tree<'r>, GitError> {
    repo.revparse_single(rev)
        .and_then(|o| o.peel_to_tree())
        .map_err(|e| super::history::folder::unresolved(repo, rev, e))
}

/// The subtree at `folder`, or `None` when the tree has no such folder.
pub fn subtree<'r>(
    repo: &'r Repository,
    tree: &Tree<'_>,
    folder: &str,
) -> Result<Option<Tree<'r>>, GitError> {
    let entry = match tree.get_path(Path::new(folder)) {
        Ok(entry) => entry,
        Err(e) if e.code() == git2::ErrorCode::NotFound => return Ok(None),
        Err(e) => return Err(GitError::git(format!("looking up {folder}"), e)),
    };
    if entry.kind() != Some(ObjectType::Tree) {
        return Ok(None);
    }
    repo.find_tree(entry.id())
        .map(Some)
        .map_err(|e| GitError::git(format!("reading {folder}"), e))
}

/// A blob's bytes; a submodule entry has none.
pub fn read_blob(repo: &Repository, id: Oid, mode: u32) -> Result<Vec<u8>, GitError> {
    if mode == MODE_SUBMODULE {
        return Ok(Vec::new());
    }
    repo.find_blob(id)
        .map(|b| b.content().to_vec())
        .map_err(|e| GitError::git(format!("reading blob {id}"), e))
}
