//! Which files under the team folder differ between HEAD and the work tree.
//!
//! Unlike `git status`, this never reads the index and never looks outside the team folder: it
//! compares HEAD's team subtree with the files on disk, so its cost depends on the team folder
//! alone, not on the size of the repository. A file whose bytes hash to HEAD's blob is unchanged;
//! one that does not is a candidate, which the commit step hashes again through git's filters
//! (line endings), so a CRLF checkout costs time, never a wrong commit. libgit2 runs no
//! fsmonitor, and neither does this.

use std::collections::BTreeMap;
use std::fs;
use std::os::unix::fs::PermissionsExt;
use std::path::Path;

use git2::{FileMode, ObjectType, Oid, Repository, Tree, TreeWalkMode, TreeWalkResult};

use super::GitError;
use super::team_files;

/// How a path changed between HEAD and the work tree.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ChangeKind {
    /// On disk, not in HEAD.
    Added,
    /// In both, different bytes or mode.
    Modified,
    /// In HEAD, gone from disk.
    Deleted,
}

/// One changed path under the team folder.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TeamChange {
    /// Path relative to the work tree, `/`-separated (for example `.qwen/team-memory/a.md`).
    pub path: String,
    /// What happened to it.
    pub kind: ChangeKind,
    /// The mode the file has on disk (`None` when deleted).
    pub mode: Option<FileMode>,
    /// Whether the file name is not valid UTF-8 (such a file cannot be committed).
    pub unreadable_name: bool,
}

/// A tracked file of HEAD's team subtree.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TreeFile {
    /// Its blob.
    pub id: Oid,
    /// Its mode.
    pub mode: FileMode,
}

/// Untracked hidden files are never committed (sync's own temp files and editors' swap files are
/// hidden), except these names. Hidden files already in HEAD are handled like any other.
const KEPT_HIDDEN: [&str; 4] = [".gitignore", ".gitattributes", ".gitkeep", ".secretsignore"];

/// Lists every file of `tree`'s subtree at `dir` (relative to the work tree), keyed by path
/// relative to the work tree. An absent subtree gives an empty list.
pub fn tree_files(
    repo: &Repository,
    tree: Option<&Tree<'_>>,
    dir: &str,
) -> Result<BTreeMap<String, TreeFile>, GitError> {
    let mut files = BTreeMap::new();
    let Some(tree) = tree else {
        return Ok(files);
    };
    let Some(subtree) = team_files::subtree(repo, tree, dir)? else {
        return Ok(files);
    };
    subtree
        .walk(TreeWalkMode::PreOrder, |parent, entry| {
            if entry.kind() == Some(ObjectType::Blob) {
                let path = format!(
                    "{dir}/{parent}{}",
                    String::from_utf8_lossy(entry.name_bytes())
                );
                files.insert(
                    path,
                    TreeFile {
                        id: entry.id(),
                        mode: file_mode(entry.filemode()),
                    },
                );
            }
            TreeWalkResult::Ok
        })
        .map_err(|e| GitError::git(format!("reading {dir} in HEAD"), e))?;
    Ok(files)
}

/// [`tree_files`] with the gitlinks (submodule entries) of the subtree too, as git's index
/// holds them: what the index's team entries must match after a commit, so a gitlink a
/// teammate committed is neither unstaged nor shown deleted by `git status`. Nothing else
/// takes a gitlink for a file.
pub fn index_files(
    repo: &Repository,
    tree: &Tree<'_>,
    dir: &str,
) -> Result<BTreeMap<String, TreeFile>, GitError> {
    let mut files = tree_files(repo, Some(tree), dir)?;
    let Some(subtree) = team_files::subtree(repo, tree, dir)? else {
        return Ok(files);
    };
    subtree
        .walk(TreeWalkMode::PreOrder, |parent, entry| {
            if entry.kind() == Some(ObjectType::Commit) {
                let path = format!(
                    "{dir}/{parent}{}",
                    String::from_utf8_lossy(entry.name_bytes())
                );
                let mode = FileMode::Commit;
                files.insert(
                    path,
                    TreeFile {
                        id: entry.id(),
                        mode,
                    },
                );
            }
            TreeWalkResult::Ok
        })
        .map_err(|e| GitError::git(format!("reading {dir} in HEAD"), e))?;
    Ok(files)
}

fn file_mode(raw: i32) -> FileMode {
    match raw {
        0o100755 => FileMode::BlobExecutable,
        0o120000 => FileMode::Link,
        _ => FileMode::Blob,
    }
}

/// Compares HEAD's `dir` with the work tree. Untracked files that `.gitignore` excludes are left
/// out, as `git add` would, and so are untracked hidden files other than `.gitignore`,
/// `.gitattributes`, `.gitkeep` and `.secretsignore`.
pub fn team_changes(
    repo: &Repository,
    head: Option<&Tree<'_>>,
    dir: &str,
) -> Result<Vec<TeamChange>, GitError> {
    folder_changes(repo, head, dir, true)
}

/// [`team_changes`], with `.gitignore` honoured or not: in branch mode the work tree's branch
/// ignores the team folder itself, and every file in it is teammem's to record.
pub fn folder_changes(
    repo: &Repository,
    head: Option<&Tree<'_>>,
    dir: &str,
    honour_ignores: bool,
) -> Result<Vec<TeamChange>, GitError> {
    let Some(workdir) = repo.workdir() else {
        return Ok(Vec::new());
    };
    let tracked = tree_files(repo, head, dir)?;
    let filemode = repo
        .config()
        .and_then(|c| c.get_bool("core.filemode"))
        .unwrap_or(true);
    let mut on_disk = Vec::new();
    walk(&workdir.join(dir), dir, false, &mut on_disk)?;
    let mut changes = Vec::new();
    let mut seen = std::collections::HashSet::new();
    for file in on_disk {
        let meta = &file.meta;
        let head_file = tracked.get(&file.path);
        let mode = if meta.file_type().is_symlink() {
            FileMode::Link
        } else if filemode {
            if meta.permissions().mode() & 0o100 != 0 {
                FileMode::BlobExecutable
            } else {
                FileMode::Blob
            }
        } else {
            head_file.map_or(FileMode::Blob, |f| f.mode)
        };
        let kind = match head_file {
            Some(head_file) => {
                seen.insert(file.path.clone());
                if head_file.mode == mode && raw_blob_id(&file.abs, meta)? == head_file.id {
                    continue;
                }
                ChangeKind::Modified
            }
            None => {
                if file.hidden
                    || (honour_ignores && !file.unreadable_name && is_ignored(repo, &file.path)?)
                {
                    continue;
                }
                ChangeKind::Added
            }
        };
        changes.push(TeamChange {
            path: file.path,
            kind,
            mode: Some(mode),
            unreadable_name: file.unreadable_name,
        });
    }
    for (path, _) in tracked {
        if !seen.contains(&path) {
            changes.push(TeamChange {
                path,
                kind: ChangeKind::Deleted,
                mode: None,
                unreadable_name: false,
            });
        }
    }
    changes.sort_by(|a, b| a.path.as_bytes().cmp(b.path.as_bytes()));
    Ok(changes)
}

fn is_ignored(repo: &Repository, path: &str) -> Result<bool, GitError> {
    repo.is_path_ignored(path)
        .map_err(|e| GitError::git(format!("reading .gitignore rules for {path}"), e))
}

/// The blob id of a file's bytes as they are on disk (no filters), or of a symlink's target.
fn raw_blob_id(abs: &Path, meta: &fs::Metadata) -> Result<Oid, GitError> {
    if meta.file_type().is_symlink() {
        use std::os::unix::ffi::OsStrExt;
        let target = fs::read_link(abs).map_err(|e| GitError::io(abs, e))?;
        return Oid::hash_object(ObjectType::Blob, target.as_os_str().as_bytes())
            .map_err(|e| GitError::git(format!("hashing {}", abs.display()), e));
    }
    let bytes = fs::read(abs).map_err(|e| GitError::io(abs, e))?;
    Oid::hash_object(ObjectType::Blob, &bytes)
        .map_err(|e| GitError::git(format!("hashing {}", abs.display()), e))
}

struct DiskFile {
    path: String,
    abs: std::path::PathBuf,
    meta: fs::Metadata,
    unreadable_name: bool,
    hidden: bool,
}

/// Lists files and symlinks below `abs` (not following symlinks), skipping nested repositories.
fn walk(abs: &Path, rel: &str, hidden: bool, out: &mut Vec<DiskFile>) -> Result<(), GitError> {
    let entries = match fs::read_dir(abs) {
        Ok(entries) => entries,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(()),
        Err(e) if e.kind() == std::io::ErrorKind::NotADirectory => return Ok(()),
        Err(e) => return Err(GitError::io(abs, e)),
    };
    for entry in entries {
        let entry = entry.map_err(|e| GitError::io(abs, e))?;
        let name = entry.file_name();
        let (name, unreadable_name) = match name.to_str() {
            Some(name) => (name.to_string(), false),
            None => (name.to_string_lossy().into_owned(), true),
        };
        if name == ".git" {
            continue;
        }
        let hidden = hidden || (name.starts_with('.') && !KEPT_HIDDEN.contains(&name.as_str()));
        let path = entry.path();
        let meta = fs::symlink_metadata(&path).map_err(|e| GitError::io(&path, e))?;
        let rel = format!("{rel}/{name}");
        if meta.is_dir() {
            walk(&path, &rel, hidden, out)?;
        } else if meta.is_file() || meta.file_type().is_symlink() {
            out.push(DiskFile {
                path: rel,
                abs: path,
                meta,
                unreadable_name,
                hidden,
            });
        }
    }
    Ok(())
}
