//! What git's history says: here, ancestry questions (does A contain B, which commits are only
//! local, the merge base) that also hold in a shallow clone; when tracked files last changed
//! ([`file`]), what a range of commits did to a folder ([`folder`]), and which commit removed a
//! path ([`removal`]).
//!
//! libgit2's graph functions (`graph_descendant_of`, revwalk, `merge_base`) follow parents
//! past the shallow boundary and fail on the missing commit, where git stops at the roots
//! listed in `.git/shallow`. Each question is asked of libgit2 first; when it reports a
//! missing object, it is answered again by a walk that treats the shallow roots as having no
//! parents, as git does.

pub(crate) mod file;
pub(crate) mod folder;
pub(crate) mod removal;

use std::collections::{HashSet, VecDeque};

use git2::{Oid, Repository, Sort};

use crate::git::GitError;

/// Whether `descendant` contains `ancestor` (a commit contains itself).
pub fn contains(repo: &Repository, descendant: Oid, ancestor: Oid) -> Result<bool, GitError> {
    if descendant == ancestor {
        return Ok(true);
    }
    match repo.graph_descendant_of(descendant, ancestor) {
        Ok(answer) => Ok(answer),
        Err(err) if missing_object(&err) => Ok(ancestors(repo, descendant)?.contains(&ancestor)),
        Err(err) => Err(GitError::git(
            format!("comparing {descendant} with {ancestor}"),
            err,
        )),
    }
}

/// The commits reachable from `local` but not from `upstream` (all of `local`'s history when
/// `upstream` is `None`), newest first.
pub fn local_only(
    repo: &Repository,
    local: Oid,
    upstream: Option<Oid>,
) -> Result<Vec<Oid>, GitError> {
    let context = || format!("listing the commits of {local} not yet upstream");
    let walked = (|| -> Result<Vec<Oid>, git2::Error> {
        let mut walk = repo.revwalk()?;
        walk.set_sorting(Sort::TOPOLOGICAL | Sort::TIME)?;
        walk.push(local)?;
        if let Some(upstream) = upstream {
            walk.hide(upstream)?;
        }
        walk.collect()
    })();
    match walked {
        Ok(commits) => Ok(commits),
        Err(err) if missing_object(&err) => {
            let hidden = match upstream {
                Some(upstream) => ancestors(repo, upstream)?,
                None => HashSet::new(),
            };
            let mut commits: Vec<(i64, Oid)> = ancestors(repo, local)?
                .into_iter()
                .filter(|oid| !hidden.contains(oid))
                .map(|oid| {
                    let time = repo
                        .find_commit(oid)
                        .map(|c| c.time().seconds())
                        .unwrap_or(0);
                    (time, oid)
                })
                .collect();
            commits.sort_by(|a, b| b.cmp(a));
            Ok(commits.into_iter().map(|(_, oid)| oid).collect())
        }
        Err(err) => Err(GitError::git(context(), err)),
    }
}

/// The best common ancestor of `one` and `two`.
pub fn merge_base(repo: &Repository, one: Oid, two: Oid) -> Result<Oid, GitError> {
    let context = || format!("finding the merge base of {one} and {two}");
    match repo.merge_base(one, two) {
        Ok(base) => Ok(base),
        Err(err) if missing_object(&err) => {
            let theirs = ancestors(repo, two)?;
            breadth_first(repo, one, |oid| theirs.contains(&oid))?
                .ok_or_else(|| GitError::git(context(), err))
        }
        Err(err) => Err(GitError::git(context(), err)),
    }
}

/// Every commit reachable from `start`, stopping at shallow roots and missing parents.
fn ancestors(repo: &Repository, start: Oid) -> Result<HashSet<Oid>, GitError> {
    let mut seen = HashSet::new();
    breadth_first(repo, start, |oid| {
        seen.insert(oid);
        false
    })?;
    Ok(seen)
}

/// Walks parents breadth-first from `start` until `stop` says so; returns that commit.
fn breadth_first(
    repo: &Repository,
    start: Oid,
    mut stop: impl FnMut(Oid) -> bool,
) -> Result<Option<Oid>, GitError> {
    let roots = shallow_roots(repo);
    let mut queue = VecDeque::from([start]);
    let mut visited = HashSet::from([start]);
    while let Some(oid) = queue.pop_front() {
        if stop(oid) {
            return Ok(Some(oid));
        }
        if roots.contains(&oid) {
            continue;
        }
        let Ok(commit) = repo.find_commit(oid) else {
            continue;
        };
        for parent in commit.parent_ids() {
            if visited.insert(parent) {
                queue.push_back(parent);
            }
        }
    }
    Ok(None)
}

/// libgit2 reports a commit missing past the shallow boundary as `NotFound`, or from the
/// merge-base code as a generic error of the object database class.
fn missing_object(err: &git2::Error) -> bool {
    err.code() == git2::ErrorCode::NotFound
        || (err.class() == git2::ErrorClass::Odb && err.message().contains("not found"))
}

fn shallow_roots(repo: &Repository) -> HashSet<Oid> {
    std::fs::read_to_string(repo.commondir().join("shallow"))
        .unwrap_or_default()
        .lines()
        .filter_map(|line| Oid::from_str(line.trim()).ok())
        .collect()
}
