//! What a range of commits did to one folder: every file version each commit wrote there (so a
//! secret added and removed inside a pull request is still seen), who made each commit, and
//! the folder's overall change between two revisions with renames found by similarity.

use std::path::Path;

use git2::{Delta, DiffFindOptions, Oid, Repository, Tree};

use crate::git::GitError;
use crate::git::history;
use crate::git::team_files::{revision_tree, subtree};

/// A commit of the range.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CommitInfo {
    /// Full hex id.
    pub id: String,
    /// Author name.
    pub author: String,
    /// Author email.
    pub email: String,
    /// Author time, seconds since the epoch (UTC).
    pub time: i64,
    /// First line of the message.
    pub summary: String,
}

/// One file change a commit made in the folder.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FolderChange {
    /// Index of the commit in [`RangeHistory::commits`].
    pub commit: usize,
    /// Path relative to the folder.
    pub rel: String,
    /// The new version; `None` when the commit deleted the file.
    pub new: Option<(Oid, u32)>,
}

/// The commits of `BASE..HEAD` (oldest first) and the folder changes each made.
#[derive(Debug, Clone, Default)]
pub struct RangeHistory {
    /// Commits reachable from HEAD but not from BASE, parents before children.
    pub commits: Vec<CommitInfo>,
    /// Changes in commit order.
    pub changes: Vec<FolderChange>,
}

/// Resolves a revision to a commit id.
pub fn resolve_commit(repo: &Repository, rev: &str) -> Result<Oid, GitError> {
    repo.revparse_single(rev)
        .and_then(|o| o.peel_to_commit())
        .map(|c| c.id())
        .map_err(|e| unresolved(repo, rev, e))
}

/// The error for a revision that does not resolve. libgit2 says only "parent 0 does not
/// exist" for `HEAD~100` on a short history; this says how far back the history goes.
pub fn unresolved(repo: &Repository, rev: &str, err: git2::Error) -> GitError {
    let Some(at) = rev.find(['~', '^']) else {
        return GitError::git(format!("resolving `{rev}`"), err);
    };
    let base = &rev[..at];
    let Ok(start) = repo
        .revparse_single(if base.is_empty() { "HEAD" } else { base })
        .and_then(|o| o.peel_to_commit())
    else {
        return GitError::git(format!("resolving `{rev}`"), err);
    };
    let mut depth = 0usize;
    let mut commit = start;
    while let Ok(parent) = commit.parent(0) {
        depth += 1;
        commit = parent;
    }
    GitError::git(
        format!(
            "resolving `{rev}`: `{base}` has only {depth} commit{} before it, so `{rev}` is past \
             the first commit — use a base inside the history (`{base}~{depth}` is the first \
             commit), or `--all` to check what HEAD holds",
            if depth == 1 { "" } else { "s" }
        ),
        err,
    )
}

/// Walks `base..head` like `git log base..head` (parents before children) and records what each commit changed below
/// `folder`, compared with its first parent. A merge's other side is walked too, so its
/// commits carry their own changes.
pub fn range(
    repo: &Repository,
    base: Oid,
    head: Oid,
    folder: &str,
) -> Result<RangeHistory, GitError> {
    let git = |what: &str| {
        let what = what.to_string();
        move |e| GitError::git(what.clone(), e)
    };
    // `local_only` falls back to a walk that stops at the shallow roots when libgit2 reports a
    // missing commit (a shallow CI checkout); a shallow root's missing parent reads as none.
    let mut commits = history::local_only(repo, head, Some(base))?;
    commits.reverse();
    let mut out = RangeHistory::default();
    for id in commits {
        let commit = repo
            .find_commit(id)
            .map_err(git(&format!("reading commit {id}")))?;
        let tree = commit
            .tree()
            .map_err(git(&format!("reading commit {id}")))?;
        let new = subtree(repo, &tree, folder)?;
        let old = match commit.parent(0) {
            Ok(parent) => {
                let tree = parent
                    .tree()
                    .map_err(git(&format!("reading commit {}", parent.id())))?;
                subtree(repo, &tree, folder)?
            }
            Err(_) => None,
        };
        let index = out.commits.len();
        let author = commit.author();
        out.commits.push(CommitInfo {
            id: id.to_string(),
            author: String::from_utf8_lossy(author.name_bytes()).into_owned(),
            email: String::from_utf8_lossy(author.email_bytes()).into_owned(),
            time: author.when().seconds(),
            summary: String::from_utf8_lossy(commit.summary_bytes().unwrap_or_default())
                .into_owned(),
        });
        // Most commits leave the folder alone: equal subtree ids need no diff at all.
        if old.as_ref().map(Tree::id) == new.as_ref().map(Tree::id) {
            continue;
        }
        let diff = repo
            .diff_tree_to_tree(old.as_ref(), new.as_ref(), None)
            .map_err(git(&format!("diffing commit {id}")))?;
        // A merge brings in versions its other parents already had: those were written (and are
        // walked) in their own commits, or come from BASE; only what the merge itself wrote is
        // its change.
        let mut other_parents = Vec::new();
        for parent in commit.parents().skip(1) {
            let tree = parent
                .tree()
                .map_err(git(&format!("reading commit {}", parent.id())))?;
            if let Some(sub) = subtree(repo, &tree, folder)? {
                other_parents.push(sub);
            }
        }
        let mut new_modes = crate::git::tree_entries::SideModes::new(repo, new.as_ref());
        for delta in diff.deltas() {
            let file = if delta.status() == Delta::Deleted {
                delta.old_file()
            } else {
                delta.new_file()
            };
            let path = file.path().map(Path::to_path_buf).unwrap_or_default();
            let from_other_parent = delta.status() != Delta::Deleted
                && other_parents.iter().any(|sub| {
                    sub.get_path(&path)
                        .is_ok_and(|entry| entry.id() == file.id())
                });
            if from_other_parent {
                continue;
            }
            let rel = String::from_utf8_lossy(file.path_bytes().unwrap_or_default()).into_owned();
            // The mode from the tree entry: git2's `DiffFile::mode` panics on a crafted one.
            let new = (delta.status() != Delta::Deleted).then(|| {
                let mode = new_modes.mode(&file);
                (file.id(), mode.unwrap_or(0o100644) as u32)
            });
            out.changes.push(FolderChange {
                commit: index,
                rel,
                new,
            });
        }
    }
    Ok(out)
}

/// How a file differs between two revisions.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RevisionChange {
    /// Only in the new revision.
    Added,
    /// Only in the old revision.
    Deleted,
    /// In both, with other bytes or mode.
    Modified,
    /// Moved, found by content similarity (possibly also edited).
    Renamed,
}

/// One file's change between two revisions.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FolderDiffEntry {
    /// What happened.
    pub kind: RevisionChange,
    /// The old path and blob (absent when added).
    pub old: Option<(String, Oid, u32)>,
    /// The new path and blob (absent when deleted).
    pub new: Option<(String, Oid, u32)>,
}

/// The changes below `folder` from `old` to `new`, renames detected by similarity as `git diff
/// -M` does (50% similar content).
pub fn folder_diff(
    repo: &Repository,
    old: &str,
    new: &str,
    folder: &str,
) -> Result<Vec<FolderDiffEntry>, GitError> {
    let old_tree = revision_tree(repo, old)?;
    let new_tree = revision_tree(repo, new)?;
    let old_sub = subtree(repo, &old_tree, folder)?;
    let new_sub = subtree(repo, &new_tree, folder)?;
    let mut diff = repo
        .diff_tree_to_tree(old_sub.as_ref(), new_sub.as_ref(), None)
        .map_err(|e| GitError::git(format!("diffing {old}..{new}"), e))?;
    diff.find_similar(Some(DiffFindOptions::new().renames(true)))
        .map_err(|e| GitError::git("finding renames", e))?;
    // The mode from the tree entry: git2's `DiffFile::mode` panics on a crafted one.
    let mut old_modes = crate::git::tree_entries::SideModes::new(repo, old_sub.as_ref());
    let mut new_modes = crate::git::tree_entries::SideModes::new(repo, new_sub.as_ref());
    let mut side = |old_side: bool, file: git2::DiffFile<'_>| {
        let modes = if old_side {
            &mut old_modes
        } else {
            &mut new_modes
        };
        let mode = modes.mode(&file);
        (
            String::from_utf8_lossy(file.path_bytes().unwrap_or_default()).into_owned(),
            file.id(),
            mode.unwrap_or(0o100644) as u32,
        )
    };
    let mut out = Vec::new();
    for delta in diff.deltas() {
        let (kind, old, new) = match delta.status() {
            Delta::Added | Delta::Copied => (
                RevisionChange::Added,
                None,
                Some(side(false, delta.new_file())),
            ),
            Delta::Deleted => (
                RevisionChange::Deleted,
                Some(side(true, delta.old_file())),
                None,
            ),
            Delta::Renamed => (
                RevisionChange::Renamed,
                Some(side(true, delta.old_file())),
                Some(side(false, delta.new_file())),
            ),
            Delta::Unmodified | Delta::Ignored | Delta::Untracked | Delta::Unreadable => continue,
            _ => (
                RevisionChange::Modified,
                Some(side(true, delta.old_file())),
                Some(side(false, delta.new_file())),
            ),
        };
        out.push(FolderDiffEntry { kind, old, new });
    }
    Ok(out)
}
