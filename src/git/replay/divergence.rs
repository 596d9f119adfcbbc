//! Where the local branch stands against its upstream, and telling sync commits from the
//! user's own.

use git2::{Commit, Oid, Repository, Tree};

use crate::git::commit::{SYNC_SUBJECT, SYNC_TRAILER};
use crate::git::{GitError, history};

/// How many user commits are listed at most in a `diverged` / `local-ahead` result.
const LISTED_USER_COMMITS: usize = 10;

/// Where the local branch stands against its upstream.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Divergence {
    /// Same commit (or both unborn).
    UpToDate,
    /// Only upstream moved: fast-forward.
    Behind,
    /// Only local sync commits are unpublished and upstream did not move: push them.
    SyncAhead {
        /// The local-only sync commits, newest first.
        commits: Vec<Oid>,
    },
    /// Both moved and every local-only commit is a sync commit: replay, then push.
    Replayable {
        /// The local-only sync commits, newest first.
        commits: Vec<Oid>,
    },
    /// A user commit is unpublished and upstream did not move (`local-ahead`).
    LocalAhead {
        /// Some of the user's unpublished commits, newest first.
        user_commits: Vec<Oid>,
    },
    /// A user commit is unpublished and upstream moved too (`diverged`).
    Diverged {
        /// Some of the user's unpublished commits, newest first.
        user_commits: Vec<Oid>,
    },
}

/// Compares the local tip with the fetched upstream tip (`None`: unborn / no remote branch).
pub fn classify(
    repo: &Repository,
    local: Option<Oid>,
    upstream: Option<Oid>,
) -> Result<Divergence, GitError> {
    let Some(local) = local else {
        return Ok(match upstream {
            Some(_) => Divergence::Behind,
            None => Divergence::UpToDate,
        });
    };
    if upstream == Some(local) {
        return Ok(Divergence::UpToDate);
    }
    let mut sync_commits = Vec::new();
    let mut user_commits = Vec::new();
    for oid in history::local_only(repo, local, upstream)? {
        let commit = repo
            .find_commit(oid)
            .map_err(|e| GitError::git(format!("reading commit {oid}"), e))?;
        if is_sync_commit(repo, &commit)? {
            sync_commits.push(oid);
        } else {
            user_commits.push(oid);
            if user_commits.len() >= LISTED_USER_COMMITS {
                break;
            }
        }
    }
    let upstream_moved = match upstream {
        Some(upstream) => !history::contains(repo, local, upstream)?,
        None => false,
    };
    Ok(
        match (
            user_commits.is_empty(),
            sync_commits.is_empty(),
            upstream_moved,
        ) {
            (false, _, true) => Divergence::Diverged { user_commits },
            (false, _, false) => Divergence::LocalAhead { user_commits },
            (true, true, _) => Divergence::Behind,
            (true, false, true) => Divergence::Replayable {
                commits: sync_commits,
            },
            (true, false, false) => Divergence::SyncAhead {
                commits: sync_commits,
            },
        },
    )
}

/// A sync commit: the sync subject, the trailer, one parent, and changes only inside the
/// team folder.
pub fn is_sync_commit(repo: &Repository, commit: &Commit<'_>) -> Result<bool, GitError> {
    let message = String::from_utf8_lossy(commit.message_bytes());
    let subject_fits = message.lines().next().map(str::trim) == Some(SYNC_SUBJECT);
    let trailer_fits = message
        .rsplit("\n\n")
        .next()
        .is_some_and(|last| last.lines().any(|line| line.trim() == SYNC_TRAILER));
    if !subject_fits || !trailer_fits || commit.parent_count() > 1 {
        return Ok(false);
    }
    let context = || format!("reading commit {}", commit.id());
    let tree = commit.tree().map_err(|e| GitError::git(context(), e))?;
    let parent_tree = match commit.parent(0) {
        Ok(parent) => Some(parent.tree().map_err(|e| GitError::git(context(), e))?),
        Err(_) => None,
    };
    let outside = |t: Option<&Tree<'_>>| -> Vec<(String, Oid)> {
        t.map(|t| {
            t.iter()
                .filter(|e| e.name_bytes() != b".qwen")
                .map(|e| (String::from_utf8_lossy(e.name_bytes()).into_owned(), e.id()))
                .collect()
        })
        .unwrap_or_default()
    };
    if outside(Some(&tree)) != outside(parent_tree.as_ref()) {
        return Ok(false);
    }
    let qwen = |t: Option<&Tree<'_>>| -> Result<Vec<(String, Oid)>, GitError> {
        let Some(t) = t else { return Ok(Vec::new()) };
        let Some(entry) = t.get_name(".qwen") else {
            return Ok(Vec::new());
        };
        let Ok(sub) = repo.find_tree(entry.id()) else {
            return Ok(vec![(".qwen".into(), entry.id())]);
        };
        Ok(sub
            .iter()
            .filter(|e| e.name_bytes() != b"team-memory")
            .map(|e| (String::from_utf8_lossy(e.name_bytes()).into_owned(), e.id()))
            .collect())
    };
    Ok(qwen(Some(&tree))? == qwen(parent_tree.as_ref())?)
}
