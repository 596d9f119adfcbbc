//! Current-branch mode: naming the team folder entries a pull brought in that teammem leaves
//! alone — a symlink pointing outside the folder or nowhere, a gitlink, a folder where
//! `MEMORY.md` belongs, a name git refuses. git checked each out as the teammate committed it
//! (that is what `git merge --ff-only` does); teammem never reads through it, never commits or
//! deletes it, and the rest of the folder syncs both ways. Each is named once, in the report of
//! the sync that brought it (`withheld`); readers keep withholding it (`list`, session start).
//! Only the subtrees the pull changed are read (`git/tree_entries.rs`), so the cost is what
//! arrived, not the folder's size.

use std::path::Path;

use git2::{FileMode, Oid, Repository};

use crate::domain::scope::TEAM_DIR;
use crate::git::GitError;
use crate::git::{fast_forward, team_files, tree_entries};

use super::quarantine::Quarantined;
use super::{OpError, SyncOutcome};

/// What the report adds to each reason: what teammem does with the entry.
pub(super) const LEFT_ALONE: &str =
    "never read, committed or deleted by sync; left as git checked it out";

/// Adds to `outcome.withheld` each entry of the team folder that the move of `refname` from
/// `before` to its tip now brought in and that teammem leaves alone. `team_dir` is the folder
/// on disk, where a symlink's target is resolved (never opened).
pub(crate) fn name_arrived_entries(
    repo: &Repository,
    refname: &str,
    before: Option<Oid>,
    team_dir: &Path,
    outcome: &mut SyncOutcome,
) -> Result<(), OpError> {
    let after = fast_forward::current_tip(repo, refname)?;
    let Some(after) = after.filter(|tip| Some(*tip) != before) else {
        return Ok(());
    };
    let old = team_tree(repo, before)?;
    let new = team_tree(repo, Some(after))?;
    let Some(new) = new else {
        return Ok(());
    };
    let root = std::fs::canonicalize(team_dir).ok();
    for change in tree_entries::diff(repo, old.as_ref(), Some(&new))? {
        let Some(refused) = change.refused else {
            continue;
        };
        let mode = new
            .get_path(Path::new(&change.rel))
            .map(|entry| entry.filemode())
            .ok();
        let why = match mode {
            Some(m) if m == i32::from(FileMode::Link) => {
                match symlink_reason(&team_dir.join(&change.rel), root.as_deref()) {
                    Some(why) => why,
                    // Inside the folder: read as the memory it points at, which is gated.
                    None => continue,
                }
            }
            Some(m) if m == i32::from(FileMode::Commit) => "a gitlink (submodule), not a memory",
            _ => refused,
        };
        outcome.withheld.push(Quarantined::new(
            &format!("{TEAM_DIR}/{}", change.rel),
            vec![format!("{why} — {LEFT_ALONE}")],
        ));
    }
    Ok(())
}

/// The team folder's tree at `commit` (`None`: no commit, or no folder there).
fn team_tree(repo: &Repository, commit: Option<Oid>) -> Result<Option<git2::Tree<'_>>, OpError> {
    let Some(commit) = commit else {
        return Ok(None);
    };
    let tree = repo
        .find_commit(commit)
        .and_then(|c| c.tree())
        .map_err(|e| GitError::git(format!("reading the tree of {commit}"), e))?;
    Ok(team_files::subtree(repo, &tree, TEAM_DIR)?)
}

/// Why a symlink at `abs` is withheld, as readers decide it (`domain/store.rs`): it points
/// nowhere, or outside `root`. `None` when it leads to something inside the folder.
pub(super) fn symlink_reason(abs: &Path, root: Option<&Path>) -> Option<&'static str> {
    match (std::fs::canonicalize(abs), root) {
        (Err(_), _) => Some("a symlink that points nowhere"),
        (Ok(target), Some(root)) if target.starts_with(root) => None,
        (Ok(_), _) => Some("a symlink that points outside the team folder"),
    }
}
