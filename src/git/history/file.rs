//! When tracked files last changed, and who changed them; when they were first added.
//!
//! A file's mtime says when it was checked out, not when its content was written, so after a
//! clone only the history knows a memory's age. Like `git log -- PATH`, a merge that takes the
//! file from one of its parents does not count as changing it.

use std::collections::{BinaryHeap, HashMap, HashSet};
use std::path::Path;
use std::time::Instant;

use git2::{Oid, Repository, Sort};

use crate::git::GitError;

/// The last commit that changed a file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LastChange {
    /// The commit.
    pub commit: Oid,
    /// Author time, seconds since the Unix epoch (what `git log` shows).
    pub time: i64,
    /// The author's name.
    pub author: String,
}

/// The blob each path holds in `HEAD`'s tree (paths relative to the repository root); paths not
/// in `HEAD` are left out. An unborn `HEAD` gives an empty map.
pub fn head_blobs(repo: &Repository, paths: &[String]) -> Result<HashMap<String, Oid>, GitError> {
    let mut out = HashMap::new();
    let tree = match repo.head().and_then(|h| h.peel_to_tree()) {
        Ok(tree) => tree,
        Err(e)
            if e.code() == git2::ErrorCode::UnbornBranch
                || e.code() == git2::ErrorCode::NotFound =>
        {
            return Ok(out);
        }
        Err(e) => return Err(GitError::git("reading HEAD", e)),
    };
    for (path, blob) in paths.iter().zip(blobs_at(repo, &tree, paths)) {
        if let Some(blob) = blob {
            out.insert(path.clone(), blob);
        }
    }
    Ok(out)
}

fn blob_at(tree: &git2::Tree<'_>, path: &str) -> Option<Oid> {
    tree.get_path(Path::new(path)).ok().map(|e| e.id())
}

/// What `tree` holds at each of `paths`, each folder's tree read once: memories share a few
/// folders, and a folder of thousands of memories is a tree too large for libgit2's object
/// cache (4 KiB by default), read and inflated again at every `get_path`.
fn blobs_at(repo: &Repository, tree: &git2::Tree<'_>, paths: &[String]) -> Vec<Option<Oid>> {
    let mut folders: HashMap<&str, Option<git2::Tree<'_>>> = HashMap::new();
    paths
        .iter()
        .map(|path| {
            let Some((folder, name)) = path.rsplit_once('/') else {
                return tree.get_name(path).map(|e| e.id());
            };
            folders
                .entry(folder)
                .or_insert_with(|| {
                    tree.get_path(Path::new(folder))
                        .ok()
                        .and_then(|entry| entry.to_object(repo).ok())
                        .and_then(|object| object.into_tree().ok())
                })
                .as_ref()
                .and_then(|t| t.get_name(name))
                .map(|e| e.id())
        })
        .collect()
}

/// The folder all `paths` share (`.qwen/team-memory` for team memories), or "" for the root.
pub(crate) fn common_dir(paths: &[String]) -> String {
    let mut common: Option<Vec<&str>> = None;
    for path in paths {
        let mut parts: Vec<&str> = path.split('/').collect();
        parts.pop();
        common = Some(match common {
            None => parts,
            Some(c) => c
                .iter()
                .zip(&parts)
                .take_while(|(a, b)| a == b)
                .map(|(a, _)| *a)
                .collect(),
        });
    }
    common.unwrap_or_default().join("/")
}

/// Whether the commit's `dir` is the same tree as in one of its parents: then none of the
/// files below it changed in this commit, and the commit can be skipped without a lookup per
/// file (most commits of a project never touch its memory folder).
fn dir_unchanged(tree: &git2::Tree<'_>, parents: &[git2::Tree<'_>], dir: &str) -> bool {
    if dir.is_empty() {
        return parents.iter().any(|p| p.id() == tree.id());
    }
    let here = blob_at(tree, dir);
    parents.iter().any(|p| blob_at(p, dir) == here)
}

/// Walks history from `HEAD`, newest first, calling `visit` with each commit, its tree and its
/// parents' trees until it returns false. In a shallow clone the walk ends at the shallow
/// boundary, and a parent that is not there counts as no parent, as git treats the shallow
/// roots (libgit2's revwalk would instead fail on the missing commit).
///
/// Without a `deadline` the order is topological (children before parents). With one, the
/// walk stops once it passes, and goes by commit date as `git log` does without
/// `--topo-order`: libgit2 reads the whole history before it gives the first commit in any
/// sorted order (seconds in a history of 100,000 commits), so no deadline could hold there.
fn walk<F>(repo: &Repository, deadline: Option<Instant>, mut visit: F) -> Result<(), GitError>
where
    F: FnMut(&git2::Commit<'_>, &git2::Tree<'_>, &[git2::Tree<'_>]) -> bool,
{
    let Ok(head) = repo.head().and_then(|h| h.peel_to_commit()) else {
        return Ok(());
    };
    let mut order: Box<dyn Iterator<Item = Option<Oid>>> = match deadline {
        None => {
            let mut revwalk = repo
                .revwalk()
                .map_err(|e| GitError::git("walking history", e))?;
            revwalk
                .set_sorting(Sort::TIME | Sort::TOPOLOGICAL)
                .map_err(|e| GitError::git("walking history", e))?;
            revwalk
                .push(head.id())
                .map_err(|e| GitError::git("walking history", e))?;
            Box::new(revwalk.map(Result::ok))
        }
        Some(_) => Box::new(ByDate::new(repo, &head).map(Some)),
    };
    for oid in &mut order {
        if deadline.is_some_and(|d| Instant::now() > d) {
            break;
        }
        let Some(oid) = oid else {
            // A missing parent: the shallow boundary.
            break;
        };
        let Ok(commit) = repo.find_commit(oid) else {
            break;
        };
        let tree = commit
            .tree()
            .map_err(|e| GitError::git(format!("reading the tree of {oid}"), e))?;
        let parents: Vec<git2::Tree<'_>> = commit
            .parent_ids()
            .filter_map(|id| repo.find_commit(id).ok())
            .filter_map(|p| p.tree().ok())
            .collect();
        if !visit(&commit, &tree, &parents) {
            break;
        }
    }
    Ok(())
}

/// The commits from one, newest commit date first, as `git log` lists them without
/// `--topo-order`, each read only when it is reached: a walk that may stop early pays only for
/// the commits it takes. (libgit2's revwalk reads the whole history before it gives the first
/// commit in any sorted order: seconds in a history of 100,000 commits.) A parent that is not
/// there (the shallow boundary) is not walked.
pub struct ByDate<'r> {
    repo: &'r Repository,
    queue: BinaryHeap<(i64, Oid)>,
    seen: HashSet<Oid>,
}

impl<'r> ByDate<'r> {
    /// The walk from `start`.
    pub fn new(repo: &'r Repository, start: &git2::Commit<'_>) -> ByDate<'r> {
        ByDate {
            repo,
            queue: BinaryHeap::from([(start.time().seconds(), start.id())]),
            seen: HashSet::from([start.id()]),
        }
    }
}

impl Iterator for ByDate<'_> {
    type Item = Oid;

    fn next(&mut self) -> Option<Oid> {
        let (_, oid) = self.queue.pop()?;
        if let Ok(commit) = self.repo.find_commit(oid) {
            for id in commit.parent_ids() {
                if self.seen.insert(id) {
                    if let Ok(parent) = self.repo.find_commit(id) {
                        self.queue.push((parent.time().seconds(), id));
                    }
                }
            }
        }
        Some(oid)
    }
}

/// The last commit that changed each path (relative to the repository root) among those in
/// `HEAD`. Stops walking as soon as every path is accounted for, or once `deadline` passes:
/// the paths whose last change was not found by then are left out (see [`walk`]).
pub fn last_changes_until(
    repo: &Repository,
    paths: &[String],
    deadline: Option<Instant>,
) -> Result<HashMap<String, LastChange>, GitError> {
    if paths.is_empty() {
        return Ok(HashMap::new());
    }
    let mut pending: Vec<String> = head_blobs(repo, paths)?.into_keys().collect();
    let dir = common_dir(&pending);
    let mut found = HashMap::new();
    walk(repo, deadline, |commit, tree, parents| {
        if dir_unchanged(tree, parents, &dir) {
            return !pending.is_empty();
        }
        let here = blobs_at(repo, tree, &pending);
        let before: Vec<Vec<Option<Oid>>> = parents
            .iter()
            .map(|p| blobs_at(repo, p, &pending))
            .collect();
        let mut at = 0;
        pending.retain(|path| {
            let i = at;
            at += 1;
            let same_as_a_parent = before.iter().any(|b| b[i] == here[i]);
            if here[i].is_some() && !same_as_a_parent {
                found.insert(
                    path.clone(),
                    LastChange {
                        commit: commit.id(),
                        time: commit.author().when().seconds(),
                        author: commit.author().name().unwrap_or("unknown").to_string(),
                    },
                );
                false
            } else {
                true
            }
        });
        !pending.is_empty()
    })?;
    Ok(found)
}

/// When each path (relative to the repository root) was first added, as the author time of the
/// oldest commit that brought it in; paths not in `HEAD` are left out.
pub fn first_additions(
    repo: &Repository,
    paths: &[String],
) -> Result<HashMap<String, i64>, GitError> {
    let wanted: Vec<String> = head_blobs(repo, paths)?.into_keys().collect();
    if wanted.is_empty() {
        return Ok(HashMap::new());
    }
    let dir = common_dir(&wanted);
    let mut found: HashMap<String, i64> = HashMap::new();
    walk(repo, None, |commit, tree, parents| {
        if dir_unchanged(tree, parents, &dir) {
            return true;
        }
        for path in &wanted {
            let here = blob_at(tree, path).is_some();
            let in_a_parent = parents.iter().any(|p| blob_at(p, path).is_some());
            if here && !in_a_parent {
                let time = commit.author().when().seconds();
                let slot = found.entry(path.clone()).or_insert(time);
                *slot = (*slot).min(time);
            }
        }
        true
    })?;
    Ok(found)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn common_dirs() {
        let p = |v: &[&str]| v.iter().map(|s| s.to_string()).collect::<Vec<_>>();
        assert_eq!(
            common_dir(&p(&[
                ".qwen/team-memory/a/x.md",
                ".qwen/team-memory/b/y.md"
            ])),
            ".qwen/team-memory"
        );
        assert_eq!(
            common_dir(&p(&[".qwen/team-memory/a/x.md"])),
            ".qwen/team-memory/a"
        );
        assert_eq!(common_dir(&p(&["x.md", "a/y.md"])), "");
    }
}
