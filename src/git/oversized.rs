//! Team files too big to be memories, found on the fetched side before anything reads them:
//! only object headers are read (sizes), never the blobs, so a teammate's 1 GiB `MEMORY.md`
//! costs a few milliseconds at each sync instead of a gigabyte of memory at every checkout.

use std::path::Path;

use git2::{Oid, Repository, Sort};

use super::GitError;
use super::team_files;

/// A fetched team file over the size limit, and the commit that brought it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Oversized {
    /// The first commit (oldest) among the fetched ones that holds the file at this size.
    pub commit: Oid,
    /// Its path from the repository root.
    pub path: String,
    /// Its size in bytes.
    pub size: usize,
}

/// The first team file (under `dir`) that the commits from `base` (exclusive) to `tip` change
/// to a blob of more than `limit` bytes.
pub fn fetched_oversized(
    repo: &Repository,
    base: Option<Oid>,
    tip: Oid,
    dir: &str,
    limit: usize,
) -> Result<Option<Oversized>, GitError> {
    let git = |e| GitError::git("looking for oversized team files in the fetched commits", e);
    let team_tree = |commit: Oid| -> Result<Option<git2::Tree<'_>>, GitError> {
        let tree = repo
            .find_commit(commit)
            .and_then(|c| c.tree())
            .map_err(git)?;
        team_files::subtree(repo, &tree, dir)
    };
    let old = match base {
        Some(base) => team_tree(base)?,
        None => None,
    };
    let new = team_tree(tip)?;
    let diff = repo
        .diff_tree_to_tree(old.as_ref(), new.as_ref(), None)
        .map_err(git)?;
    let odb = repo.odb().map_err(git)?;
    let mut found = None;
    let mut modes = crate::git::tree_entries::SideModes::new(repo, new.as_ref());
    for delta in diff.deltas() {
        let file = delta.new_file();
        let mode = modes.mode(&file);
        if file.id().is_zero() || mode == Some(i32::from(git2::FileMode::Commit)) {
            continue;
        }
        let (size, _) = odb.read_header(file.id()).map_err(git)?;
        if size > limit {
            let rel = file.path().map(Path::to_path_buf).unwrap_or_default();
            found = Some((format!("{dir}/{}", rel.display()), file.id(), size));
            break;
        }
    }
    let Some((path, blob, size)) = found else {
        return Ok(None);
    };
    // The oldest fetched commit whose tree holds that blob at that path.
    let mut walk = repo.revwalk().map_err(git)?;
    walk.set_sorting(Sort::TOPOLOGICAL | Sort::REVERSE)
        .map_err(git)?;
    walk.push(tip).map_err(git)?;
    if let Some(base) = base {
        walk.hide(base).map_err(git)?;
    }
    let mut commit = tip;
    for id in walk {
        let id = id.map_err(git)?;
        let holds = repo
            .find_commit(id)
            .and_then(|c| c.tree())
            .and_then(|t| t.get_path(Path::new(&path)))
            .is_ok_and(|entry| entry.id() == blob);
        if holds {
            commit = id;
            break;
        }
    }
    Ok(Some(Oversized { commit, path, size }))
}
