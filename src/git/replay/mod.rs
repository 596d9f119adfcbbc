//! Telling sync commits from the user's own, and re-creating sync commits on top of a moved
//! upstream with a per-memory three-way merge, so no memory version is ever dropped.
//!
//! Instead of replaying each local sync commit (as `git rebase` would), the team folder of
//! the local tip is merged once with upstream's against their merge base, and one new sync
//! commit is made on top of upstream. Every local-only commit being a sync commit that
//! touches only the team folder, the rest of the local tree equals the merge base's, so the
//! new commit's tree is upstream's with the merged team folder. Nothing is signed and no hook
//! runs; when `commit.gpgsign` is on, nothing is created (never an unsigned commit for a user
//! who signs everything).
//!
//! - [`divergence`]: where the local branch stands against its upstream, and which commits are
//!   sync commits.
//! - [`merge`]: the per-memory three-way merge of two team folders.
//! - [`memory_index`]: `MEMORY.md` regenerated for a merged folder, through the gate it is handed.
//! - [`folder_tree`]: the team folder's files as git trees.

#[cfg(test)]
mod dice;
mod divergence;
mod folder_tree;
mod memory_index;
mod merge;

use git2::{Oid, Repository, Tree};

use super::commit::SYNC_SUBJECT;
use super::remote::Deadline;
use super::{GitError, history};

#[cfg(test)]
pub(crate) use divergence::is_sync_commit;
pub use divergence::{Divergence, classify};
pub(crate) use folder_tree::replace_subtree;
pub use memory_index::{MemoryIndexGate, regenerated_team_tree};
pub use merge::{MergedFolder, merge_team_folders};

/// A memory both sides changed differently: upstream's version stays at `path`, the local
/// one is kept beside it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct KeptConflict {
    /// The memory's path in the repository (upstream's version).
    pub path: String,
    /// Where the local version was kept: `<slug>.md.conflict-<short-sha>.md`.
    pub kept_as: String,
}

/// The result of a replay: a new commit on top of upstream, not yet checked out.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Replayed {
    /// The new sync commit (parent: the upstream tip). Land it with
    /// [`super::fast_forward::move_branch`] from the old local tip.
    pub commit: Oid,
    /// Memories kept in two versions.
    pub conflicts: Vec<KeptConflict>,
    /// Memories merged line by line by git's text merge.
    pub text_merged: Vec<String>,
}

/// Re-creates the local sync commits between the merge base and `local` as one sync commit on
/// top of `upstream`, merging the team folder file by file. Call only for
/// [`Divergence::Replayable`]. Creates objects only; no ref, index or file changes.
pub fn replay_sync_commits(
    repo: &Repository,
    local: Oid,
    upstream: Oid,
    gate: &dyn MemoryIndexGate,
) -> Result<Replayed, GitError> {
    let signs = repo
        .config()
        .and_then(|c| c.get_bool("commit.gpgsign"))
        .unwrap_or(false);
    if signs {
        return Err(GitError::Unsupported {
            path: repo.path().display().to_string(),
            what: "commit.gpgsign is on and teammem cannot sign the replayed sync commit".into(),
            fix: "run `git pull --rebase` yourself, or sync again after the next pull".into(),
        });
    }
    let context = |what: &str| format!("replaying sync commits of {local} onto {upstream}: {what}");
    let base = history::merge_base(repo, local, upstream)?;
    let commit_tree = |oid: Oid| -> Result<Tree<'_>, GitError> {
        repo.find_commit(oid)
            .and_then(|c| c.tree())
            .map_err(|e| GitError::git(context("reading a tree"), e))
    };
    let base_tree = commit_tree(base)?;
    let theirs_tree = commit_tree(upstream)?;
    let short = local.to_string()[..7].to_string();
    let folder = merge_team_folders(
        repo,
        Some(&base_tree),
        &commit_tree(local)?,
        &theirs_tree,
        &short,
        gate,
        None,
    )?;
    let MergedFolder {
        team_tree,
        conflicts,
        text_merged,
    } = folder;
    let root = replace_subtree(
        repo,
        Some(&theirs_tree),
        &[".qwen", "team-memory"],
        team_tree,
    )?
    .ok_or_else(|| {
        GitError::git(
            context("building the tree"),
            git2::Error::from_str("the merged tree is empty"),
        )
    })?;
    let root = repo
        .find_tree(root)
        .map_err(|e| GitError::git(context("reading the merged tree"), e))?;
    let last = repo
        .find_commit(local)
        .map_err(|e| GitError::git(context("reading the local tip"), e))?;
    let parent = repo
        .find_commit(upstream)
        .map_err(|e| GitError::git(context("reading the upstream tip"), e))?;
    let author = last.author();
    let committer = repo.signature().unwrap_or_else(|_| author.to_owned());
    let message = last.message().unwrap_or(SYNC_SUBJECT).to_string();
    let commit = repo
        .commit(None, &author, &committer, &message, &root, &[&parent])
        .map_err(|e| GitError::git(context("writing the commit"), e))?;
    Ok(Replayed {
        commit,
        conflicts,
        text_merged,
    })
}

/// `Err(OutOfTime)` saying `what` was being done once `deadline` has passed.
fn in_time(deadline: Option<Deadline>, what: &str) -> Result<(), GitError> {
    if deadline.is_some_and(|d| d.passed()) {
        return Err(GitError::OutOfTime {
            what: what.to_string(),
        });
    }
    Ok(())
}
