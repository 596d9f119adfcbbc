//! `teammem init` in a repository libgit2 cannot open (reftable refs, SHA-256 objects): the
//! same mode choice and the same `init --branch` (and `--migrate`) as elsewhere, through the git
//! CLI. Not done here: re-creating the folder's history from the current branch (the branch
//! starts from the remote's branch or the folder's files).

use std::time::Duration;

use crate::domain::scope::TEAM_DIR;
use crate::git::cli_repo::CliRepo;
use crate::git::cli_repo::transfer::CliUpstream;
use crate::git::memory_branch::{self, DEFAULT_BRANCH};
use crate::git::remote::{Deadline, NetworkOptions, Transport};
use crate::ops::sync::{self, SyncOptions};
use crate::ops::{OpError, Project};

use super::ModeChoice;
use super::branch::BranchInit;

/// How long `init`'s own git runs may take.
const BUDGET: Duration = Duration::from_secs(30);

/// [`super::choose_mode`] for a repository only git can open, with the same rules.
pub(super) fn choose_mode(cli: &CliRepo) -> Result<ModeChoice, OpError> {
    let deadline = Deadline::after(BUDGET);
    let current = |why: String| ModeChoice {
        memory_branch: None,
        why,
    };
    let recorded = cli.config(memory_branch::CONFIG_KEY, &deadline)?;
    if recorded.as_deref().is_some_and(|v| {
        matches!(
            v.to_ascii_lowercase().as_str(),
            "false" | "off" | "no" | "0"
        )
    }) {
        return Ok(current(format!(
            "{} = false in .git/config keeps the team memory on your branches",
            memory_branch::CONFIG_KEY
        )));
    }
    let branch = |name: &str, why: String| ModeChoice {
        memory_branch: Some(name.to_string()),
        why: format!("{why} (synced through git: {})", cli.why),
    };
    if let Some(name) = recorded.filter(|n| memory_branch::valid_name(n)) {
        let why = format!(
            "this repository already uses branch mode ({} = {name})",
            memory_branch::CONFIG_KEY
        );
        return Ok(branch(&name, why));
    }
    let tracked = cli.run(
        &[
            "ls-tree",
            "--name-only",
            "HEAD",
            "--",
            &format!(":(literal){TEAM_DIR}"),
        ],
        &deadline,
        "looking for a tracked team folder (git ls-tree)",
    );
    if tracked.is_ok_and(|t| !t.trim().is_empty()) {
        return Ok(current(format!(
            "{TEAM_DIR}/ is tracked on the current branch, an existing setup"
        )));
    }
    if let Some(found) = sync::cli_memory_branch(cli, &deadline)? {
        let why = format!("the remote already has the memory branch {}", found.name);
        return Ok(branch(&found.name, why));
    }
    match sync::cli_choose_remote(cli, &deadline)? {
        Some(remote) => Ok(branch(
            DEFAULT_BRANCH,
            format!(
                "the repository has a remote ({remote}), so the team memory gets a branch of \
                 its own (`teammem init --current-branch` keeps it on your branches instead)"
            ),
        )),
        None => {
            let remotes: Vec<String> = cli
                .run(&["remote"], &deadline, "listing the remotes (git remote)")?
                .lines()
                .map(str::to_string)
                .collect();
            let mut choice = super::no_chosen_remote(&remotes);
            if choice.memory_branch.is_some() {
                choice.why = format!("{} (synced through git: {})", choice.why, cli.why);
            }
            Ok(choice)
        }
    }
}

/// [`super::branch::init_branch`] through git: records `teammem.branch`, excludes the folder,
/// adopts the remote's branch (fetched first when this clone has no remote-tracking ref), then
/// records the folder on top with a local sync; with no memory at all, a first commit holding
/// an empty `MEMORY.md`.
pub(super) fn init_branch(
    project: &Project,
    cli: &CliRepo,
    name: &str,
    migrate: bool,
) -> Result<BranchInit, OpError> {
    let deadline = Deadline::after(BUDGET);
    let remote = sync::cli_choose_remote(cli, &deadline)?;
    let local_ref = format!("refs/heads/{name}");
    let mut warnings = Vec::new();
    let created_from = {
        let _lock =
            crate::git::recovery::lock::SyncLock::acquire_in(&cli.common_dir)?.map_err(|_| {
                OpError::Refused(
                    "another sync is running in this repository; try again in a moment".into(),
                )
            })?;
        cli.run(
            &["config", memory_branch::CONFIG_KEY, name],
            &deadline,
            "writing teammem.branch (git config)",
        )?;
        sync::cli_ensure_excluded(&cli.common_dir)?;
        let tracking = remote.as_ref().map(|r| format!("refs/remotes/{r}/{name}"));
        if cli.resolve(&local_ref, &deadline)?.is_some() {
            "existing"
        } else {
            if let (Some(remote), Some(tracking)) = (&remote, &tracking) {
                if cli.resolve(tracking, &deadline)?.is_none() {
                    let up = CliUpstream {
                        local_ref: local_ref.clone(),
                        remote: remote.clone(),
                        merge_ref: local_ref.clone(),
                        tracking_ref: tracking.clone(),
                    };
                    let net =
                        NetworkOptions::from_process(sync::DEFAULT_TIMEOUT, Transport::Builtin);
                    if let Err(failure) = cli.fetch(&up, &net) {
                        warnings.push(format!(
                            "could not ask {remote} whether it has {name} ({failure}); the \
                             branch starts from this clone, and the next sync merges the \
                             remote's if it has one"
                        ));
                    }
                }
            }
            match tracking
                .map(|t| cli.resolve(&t, &deadline))
                .transpose()?
                .flatten()
            {
                Some(tip) => {
                    cli.move_ref(&local_ref, &tip, None, "teammem: init --branch", &deadline)?;
                    "remote"
                }
                None => "folder",
            }
        }
    };
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
    let mut tip = cli.resolve(&local_ref, &deadline)?;
    let created_from = match (created_from, &tip) {
        ("folder", None) => "empty",
        (from, _) => from,
    };
    if tip.is_none() {
        // No memory yet: a first commit all the same, so the next sync publishes the branch.
        let blob = cli.store_raw(b"", &deadline)?;
        let mut updates = std::collections::BTreeMap::new();
        updates.insert(
            format!("{TEAM_DIR}/{}", crate::domain::scope::INDEX_FILE),
            Some(crate::git::cli_repo::TreeEntry {
                mode: "100644".into(),
                id: blob,
            }),
        );
        let tree = cli.edit_tree(None, &updates, &deadline)?;
        let message = "chore(memory): start the team memory branch\n\nTeammem-Sync: 1\n";
        // With no identity configured, the fallback the sync commits use (sync says so).
        let mut ident = cli.command();
        ident.args(["var", "GIT_COMMITTER_IDENT"]);
        let configured = cli
            .try_run(ident, b"", &deadline, "reading git's identity (git var)")?
            .success;
        let person = sync::parse_person(sync::FALLBACK_AUTHOR)?;
        let fallback = [
            ("GIT_AUTHOR_NAME", person.name.as_str()),
            ("GIT_AUTHOR_EMAIL", person.email.as_str()),
            ("GIT_COMMITTER_NAME", person.name.as_str()),
            ("GIT_COMMITTER_EMAIL", person.email.as_str()),
        ];
        let env: Vec<(&str, &std::ffi::OsStr)> = if configured {
            Vec::new()
        } else {
            fallback
                .iter()
                .map(|(k, v)| (*k, std::ffi::OsStr::new(*v)))
                .collect()
        };
        let first = cli.run_with(
            &["commit-tree", "--no-gpg-sign", &tree],
            &env,
            message.as_bytes(),
            &deadline,
            "writing the memory branch's first commit (git commit-tree)",
        )?;
        // Signed as sync signs the branch's commits; a key that cannot sign leaves the branch
        // to the first sync that records a memory.
        let plan = crate::git::sign::signing_plan_in(&cli.full_config()?);
        match cli.signed_commit(first.trim(), &plan.signing, &deadline)? {
            Ok(first) => {
                cli.move_ref(
                    &local_ref,
                    &first,
                    None,
                    "teammem: init --branch",
                    &deadline,
                )?;
                tip = Some(first);
            }
            Err(why) => warnings.push(format!(
                "commit.gpgsign is on but the memory branch's first commit could not be signed \
                 ({why}), so {name} starts with the first memory a sync records{}",
                sync::SIGNING_FIX
            )),
        }
    }
    let tracked = cli
        .run(
            &[
                "ls-tree",
                "--name-only",
                "HEAD",
                "--",
                &format!(":(literal){TEAM_DIR}"),
            ],
            &deadline,
            "looking for a tracked team folder (git ls-tree)",
        )
        .is_ok_and(|t| !t.trim().is_empty());
    let mut migration_commit = None;
    if tracked && migrate {
        match sync::cli_commit_folder_removal(cli)? {
            Ok(commit) => migration_commit = Some(commit),
            Err(why) => warnings.push(format!(
                "the tracked folder was not removed from the current branch: {why}; run \
                 `teammem init --branch --migrate` again once that is over"
            )),
        }
    } else if tracked {
        warnings.push(format!(
            "{TEAM_DIR}/ is still tracked on the current branch: sync no longer commits there, \
             but `git status` shows teammem's updates to it; run `teammem init --branch \
             --migrate` to commit its removal (the memories stay on {name})"
        ));
    }
    Ok(BranchInit {
        memory_branch: name.to_string(),
        created_from,
        memory_tip: tip,
        still_tracked: tracked && migration_commit.is_none(),
        migration_commit,
        warnings,
    })
}
