//! `teammem sync --dry-run`: the team folder's changes a sync would commit and where it would
//! fetch from and push to, computed without committing, fetching or pushing.

use serde::Serialize;

use crate::domain::scope::{INDEX_FILE, TEAM_DIR};
use crate::git::status::{self, ChangeKind};
use crate::git::upstream::{self, UpstreamLookup};

use crate::ops::{OpError, Project};

use super::SkipReason;

/// What `teammem sync --dry-run` reports: the team folder's changes a sync would commit, and
/// where it would fetch from and push to. Nothing is committed, fetched or pushed.
#[derive(Debug, Clone, Serialize)]
pub struct SyncPlan {
    /// Always true: nothing was done.
    pub dry_run: bool,
    /// Changed files under the team folder: `{path, change: added|modified|deleted}`.
    pub would_commit: Vec<PlannedChange>,
    /// The upstream a sync would fetch and push (`origin/main`), or null.
    pub upstream: Option<String>,
    /// Why a sync would stop early (same names as `skipped_reason`), or null.
    pub skipped_reason: Option<SkipReason>,
}

/// One file a sync would commit.
#[derive(Debug, Clone, Serialize)]
pub struct PlannedChange {
    /// Path relative to the work tree.
    pub path: String,
    /// `added`, `modified` or `deleted`.
    pub change: &'static str,
}

/// Computes [`SyncPlan`] from the work tree and HEAD alone (no lock taken, no network).
pub fn dry_run(project: &Project) -> Result<SyncPlan, OpError> {
    let mut plan = SyncPlan {
        dry_run: true,
        would_commit: Vec::new(),
        upstream: None,
        skipped_reason: None,
    };
    let Some(paths) = &project.repo else {
        plan.skipped_reason = Some(SkipReason::NotAGitRepo);
        return Ok(plan);
    };
    let repo = crate::git::repo::open(paths)?;
    if let Some(memory) = crate::git::memory_branch::mode(&repo)? {
        // Branch mode: the folder against what it was last made to hold.
        let base = crate::git::memory_branch::materialised(&repo)?;
        let base_tree = match base {
            Some(m) => repo.find_tree(m.tree).ok(),
            None => None,
        };
        let index_path = format!("{TEAM_DIR}/{INDEX_FILE}");
        for change in status::folder_changes(&repo, base_tree.as_ref(), TEAM_DIR, false)? {
            if change.path == index_path || (base.is_none() && change.kind == ChangeKind::Deleted) {
                continue;
            }
            plan.would_commit.push(PlannedChange {
                path: change.path,
                change: match change.kind {
                    ChangeKind::Added => "added",
                    ChangeKind::Modified => "modified",
                    ChangeKind::Deleted => "deleted",
                },
            });
        }
        match &memory.remote {
            Some(remote) => plan.upstream = Some(format!("{remote}/{}", memory.name)),
            None => plan.skipped_reason = Some(SkipReason::NoRemote),
        }
        return Ok(plan);
    }
    let head_tree = repo.head().ok().and_then(|h| h.peel_to_tree().ok());
    for change in status::team_changes(&repo, head_tree.as_ref(), TEAM_DIR)? {
        plan.would_commit.push(PlannedChange {
            path: change.path,
            change: match change.kind {
                ChangeKind::Added => "added",
                ChangeKind::Modified => "modified",
                ChangeKind::Deleted => "deleted",
            },
        });
    }
    match upstream::resolve(&repo)? {
        UpstreamLookup::Found(up) => {
            let branch = up
                .merge_ref
                .strip_prefix("refs/heads/")
                .unwrap_or(&up.merge_ref);
            plan.upstream = Some(format!("{}/{branch}", up.remote));
        }
        UpstreamLookup::NoUpstream { .. } => plan.skipped_reason = Some(SkipReason::NoUpstream),
        UpstreamLookup::Detached => plan.skipped_reason = Some(SkipReason::DetachedHead),
    }
    Ok(plan)
}
