//! `teammem init --branch [NAME]`: switch a repository to branch mode.
//!
//! The choice is recorded in the repository's own `.git/config` (`teammem.branch = NAME`),
//! never in a committed file: a file in the repository would let any teammate's commit switch
//! everyone's mode. A teammate's clone needs no setup anyway: sync finds the remote's
//! `team-memory` branch by its remote-tracking ref, or in the remote's ref advertisement.
//!
//! The memory branch is created from what the folder holds: the remote's branch when it has
//! one (fetched first when this clone has no remote-tracking ref for it); else, when the current branch tracks the folder, the folder's history along HEAD's
//! first parents re-created commit by commit (authors and messages kept), so every memory and
//! its history survives; then the folder's local changes are recorded on top. The work tree's
//! branch is told to ignore the folder through `.git/info/exclude` (local, never committed);
//! with `--migrate`, the removal of the tracked folder is committed on the current branch with
//! the sync commit machinery (the folder's files stay on disk, the rest of the index untouched).

use serde::Serialize;

use crate::domain::scope::TEAM_DIR;
use crate::git::commit::{self, CommitResult, TeamUpdate};
use crate::git::memory_branch::{self, MemoryBranch};
use crate::git::preflight::{self, Preflight};
use crate::git::status;

use crate::ops::sync::branch as sync_branch;
use crate::ops::sync::{self, SyncOptions};
use crate::ops::{OpError, Project};

/// How many commits of the current branch are looked at for the folder's history.
const HISTORY_LIMIT: usize = 10_000;

/// What `init --branch` did.
#[derive(Debug, Clone, Serialize)]
pub struct BranchInit {
    /// The memory branch.
    pub memory_branch: String,
    /// Where its first tip came from: `existing` (already there), `remote` (the remote's
    /// branch), `history` (the folder's history on the current branch) or `folder` (the
    /// folder's files), or `empty` (nothing yet: the first memory creates it).
    pub created_from: &'static str,
    /// The local memory branch's tip.
    pub memory_tip: Option<String>,
    /// Whether the current branch still tracks the folder.
    pub still_tracked: bool,
    /// The commit on the current branch that removed the tracked folder (`--migrate`).
    pub migration_commit: Option<String>,
    /// What the user should know.
    pub warnings: Vec<String>,
}

/// Switches the project's repository to branch mode with memory branch `name`.
pub fn init_branch(project: &Project, name: &str, migrate: bool) -> Result<BranchInit, OpError> {
    if !memory_branch::valid_name(name) {
        return Err(OpError::Usage(format!(
            "--branch {name:?} is not a branch name teammem can use; pick another (default \
             {})",
            memory_branch::DEFAULT_BRANCH
        )));
    }
    let Some(paths) = &project.repo else {
        return Err(OpError::Usage(
            "not inside a git work tree; team memory lives in a repository".into(),
        ));
    };
    project.check_scope_safe(crate::domain::scope::ScopeKind::Team)?;
    if let Some(cli) = crate::git::cli_repo::CliRepo::needing_git(paths) {
        return super::git_cli::init_branch(project, &cli, name, migrate);
    }
    let repo = crate::git::repo::open(paths)?;
    let remote = memory_branch::choose_remote(&repo)?;
    let memory = MemoryBranch {
        name: name.to_string(),
        remote,
    };
    let mut warnings = Vec::new();
    let created_from = {
        let _lock = sync::lock_for_setup(&repo)?;
        let config_err = |e| crate::git::GitError::git("writing teammem.branch to .git/config", e);
        repo.config()
            .and_then(|c| c.open_level(git2::ConfigLevel::Local))
            .and_then(|mut c| c.set_str(memory_branch::CONFIG_KEY, name))
            .map_err(config_err)?;
        sync_branch::ensure_excluded(&repo)?;
        let local_ref = memory.local_ref();
        if repo.refname_to_id(&local_ref).is_err() {
            adopt_remote_branch(&repo, &memory, &mut warnings);
        }
        let tracking = memory.upstream().map(|u| u.tracking_ref);
        if repo.refname_to_id(&local_ref).is_ok() {
            "existing"
        } else if let Some(tip) = tracking.and_then(|t| repo.refname_to_id(&t).ok()) {
            memory_branch::move_ref(&repo, &local_ref, None, tip, "teammem: init --branch")?;
            "remote"
        } else if let Some(tip) = memory_branch::import_history(&repo, HISTORY_LIMIT)? {
            memory_branch::move_ref(&repo, &local_ref, None, tip, "teammem: init --branch")?;
            // The folder on disk is HEAD's folder plus the user's edits: those are recorded
            // on top by the sync below.
            let tree = memory_branch::tree_of(&repo, Some(tip))?;
            memory_branch::set_materialised(&repo, Some(tip), tree.id())?;
            "history"
        } else {
            "folder"
        }
    };
    // Record the folder's content (and materialise), on this machine only.
    let local_only = SyncOptions {
        pull: false,
        push: false,
        ..SyncOptions::default()
    };
    let outcome = sync::sync(project, &local_only)?;
    warnings.extend(outcome.warnings.iter().cloned());
    for file in &outcome.quarantined {
        warnings.push(format!(
            "{} was kept off the memory branch: {}",
            file.path,
            file.reasons.join("; ")
        ));
    }
    let mut tip = repo.refname_to_id(&memory.local_ref()).ok();
    let created_from = match (created_from, tip) {
        ("folder", None) => "empty",
        (from, _) => from,
    };
    if tip.is_none() {
        // No memory yet: a first commit all the same, so the next sync publishes the branch
        // and teammates' clones switch to branch mode by themselves.
        let mut outcome = sync::SyncOutcome::default();
        let settings = sync::commit_settings(
            &repo,
            &SyncOptions::default(),
            std::time::Instant::now() + sync::DEFAULT_TIMEOUT,
            &mut outcome,
        )?;
        match memory_branch::start(&repo, &settings)? {
            Ok(first) => {
                let _lock = sync::lock_for_setup(&repo)?;
                memory_branch::move_ref(&repo, &memory.local_ref(), None, first, "teammem: init --branch")?;
                tip = Some(first);
            }
            Err(why) => warnings.push(format!(
                "the memory branch's first commit could not be signed ({why}); the first memory creates it"
            )),
        }
    }
    let mut migration_commit = None;
    let mut still_tracked = memory_branch::tracked_folder(&repo).is_some();
    if still_tracked && migrate {
        migration_commit = migrate_folder(&repo, &mut warnings)?;
        still_tracked = memory_branch::tracked_folder(&repo).is_some();
    } else if still_tracked {
        warnings.push(format!(
            "{TEAM_DIR}/ is still tracked on the current branch: sync no longer commits there, \
             but `git status` shows teammem's updates to it; run `teammem init --branch {name} \
             --migrate` to commit its removal (the memories stay on {name})"
        ));
    }
    Ok(BranchInit {
        memory_branch: name.to_string(),
        created_from,
        memory_tip: tip.map(|t| t.to_string()),
        still_tracked,
        migration_commit,
        warnings,
    })
}

/// The remote may hold the memory branch though this clone has no remote-tracking ref for it
/// (cloned before the branch existed, or with `--single-branch`): it is fetched, so the branch
/// is adopted as it is (the folder's files recorded on top of it, only what it lacks) instead
/// of starting a second history the next sync would have to merge. Unreachable, the clone goes
/// on from its folder, and the next sync merges the two: nothing is lost either way.
fn adopt_remote_branch(repo: &git2::Repository, memory: &MemoryBranch, warnings: &mut Vec<String>) {
    let Some(up) = memory.upstream() else { return };
    if repo.refname_to_id(&up.tracking_ref).is_ok() {
        return;
    }
    let net = crate::git::remote::NetworkOptions::from_process(
        sync::DEFAULT_TIMEOUT,
        crate::git::remote::Transport::Builtin,
    );
    if let Err(failure) = crate::git::fetch::fetch(repo, &up, &net) {
        warnings.push(format!(
            "could not ask {} whether it has {} ({failure}); the branch starts from this clone, \
             and the next sync merges the remote's if it has one",
            up.remote, memory.name
        ));
    }
}

/// Commits the removal of the tracked team folder on the current branch, as a sync commit
/// (only the folder's paths change; the index's other entries, and every file on disk, stay).
fn migrate_folder(
    repo: &git2::Repository,
    warnings: &mut Vec<String>,
) -> Result<Option<String>, OpError> {
    let branch = match preflight::preflight(repo, TEAM_DIR)? {
        Preflight::Ready(branch) => branch,
        Preflight::Blocked(blocker) => {
            warnings.push(format!(
                "the tracked folder was not removed from the current branch: {blocker}; run \
                 `teammem init --branch --migrate` again once that is over"
            ));
            return Ok(None);
        }
    };
    let head_tree = repo.head().ok().and_then(|h| h.peel_to_tree().ok());
    let tracked = status::tree_files(repo, head_tree.as_ref(), TEAM_DIR)?;
    let updates: Vec<TeamUpdate> = tracked
        .keys()
        .map(|path| TeamUpdate {
            path: path.clone(),
            file: None,
        })
        .collect();
    let mut outcome = sync::SyncOutcome::default();
    let settings = sync::commit_settings(
        repo,
        &SyncOptions::default(),
        std::time::Instant::now() + sync::DEFAULT_TIMEOUT,
        &mut outcome,
    )?;
    warnings.extend(outcome.warnings);
    let _lock = sync::lock_for_setup(repo)?;
    let done = commit::commit_team_dir(
        repo,
        &branch,
        TEAM_DIR,
        &updates,
        &std::collections::HashMap::new(),
        &settings,
    )?;
    Ok(match done.result {
        CommitResult::Committed(id) => Some(id.to_string()),
        other => {
            warnings.push(format!(
                "the tracked folder was not removed from the current branch ({other:?}); run \
                 `teammem init --branch --migrate` again"
            ));
            None
        }
    })
}
