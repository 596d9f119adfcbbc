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
use crate::git::tree_entries::NameCheck;
use crate::git::{fast_forward, team_files, tree_entries};

use super::quarantine::Quarantined;
use super::{OpError, SkipReason, SyncOutcome};

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

/// The longest file name Linux file systems take (`NAME_MAX`), and the longest path the system
/// takes (`PATH_MAX`, its final NUL included).
const NAME_MAX: usize = 255;
const PATH_MAX: usize = 4096;

/// Why no checkout can write `path` (from the work tree's root) into the work tree at
/// `workdir`: a name git refuses to check out (`.git` in any case or NTFS spelling), a name or
/// a path longer than the file system takes. git's own checkout fails on such an entry as well.
pub(crate) fn unwritable(workdir: &Path, path: &str, check: &mut NameCheck<'_>) -> Option<String> {
    // `.GIT` or `.git ` below the folder: git's checkout and libgit2's fail on it, at every
    // sync, where this names it once.
    if let Some(name) = path.split('/').find(|n| check.git_refusal(n).is_some()) {
        return Some(format!(
            "the name {name:?}, which git refuses to check out (.git)"
        ));
    }
    if let Some(name) = path.split('/').find(|n| n.len() > NAME_MAX) {
        return Some(format!(
            "a name of {} bytes, over the {NAME_MAX} a file system takes",
            name.len()
        ));
    }
    let full = workdir.as_os_str().len() + 1 + path.len();
    (full >= PATH_MAX).then(|| {
        format!(
            "a path of {full} bytes here, over the {} the system takes",
            PATH_MAX - 1
        )
    })
}

/// Stops a pull whose fetched tip `tip` brings `path`, which no checkout can write here (`why`,
/// from [`unwritable`]): refused before anything is written, where a checkout would fail
/// half-way at every sync.
pub(crate) fn refuse_unwritable(path: &str, why: &str, tip: &str, outcome: &mut SyncOutcome) {
    let shown: String = if path.len() > 160 {
        format!("{}…", path.chars().take(160).collect::<String>())
    } else {
        path.to_string()
    };
    outcome.skip(
        SkipReason::Unwritable,
        format!(
            "the fetched {} brings {shown}: {why}, so no checkout can write it into this work \
             tree (git's cannot either); nothing was pulled — ask its author to remove it from \
             the branch; your team change is committed here",
            &tip[..12.min(tip.len())]
        ),
    );
}

/// [`refuse_unwritable`] on the libgit2 path: the team entries the commits from the merge base
/// of `local` and `tip` to `tip` add or change (only the subtrees that differ are read).
/// Returns whether the pull was refused.
pub(crate) fn refuse_unwritable_fetched(
    repo: &Repository,
    local: Option<Oid>,
    tip: Oid,
    outcome: &mut SyncOutcome,
) -> Result<bool, OpError> {
    let Some(workdir) = repo.workdir() else {
        return Ok(false);
    };
    let base = match local {
        Some(local) if local == tip => return Ok(false),
        Some(local) => repo.merge_base(local, tip).ok(),
        None => None,
    };
    let old = team_tree(repo, base)?;
    let Some(new) = team_tree(repo, Some(tip))? else {
        return Ok(false);
    };
    let diff = repo
        .diff_tree_to_tree(old.as_ref(), Some(&new), None)
        .map_err(|e| GitError::git("reading what the fetched commits change", e))?;
    let mut check = NameCheck::new(repo)?;
    for delta in diff.deltas() {
        let file = delta.new_file();
        let Some(rel) = file.path().filter(|_| !file.id().is_zero()) else {
            continue;
        };
        let path = format!("{TEAM_DIR}/{}", rel.to_string_lossy());
        if let Some(why) = unwritable(workdir, &path, &mut check) {
            refuse_unwritable(&path, &why, &tip.to_string(), outcome);
            return Ok(true);
        }
    }
    Ok(false)
}
