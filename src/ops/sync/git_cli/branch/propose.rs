//! The memory branch refused the push: the user's proposal branch instead, through git.

use super::CliMemory;
use crate::git::cli_repo::CliRepo;
use crate::git::cli_repo::transfer::{CliPush, CliUpstream};
use crate::git::memory_branch;
use crate::git::remote::NetworkOptions;
use crate::ops::OpError;
use crate::ops::sync::{SkipReason, SyncOutcome};

/// The memory branch refused the push: the same commits go to the user's proposal branch
/// (`team-memory-proposals/<user>`) with a lease on what the remote holds there, as the
/// libgit2 path does (`ops/sync/branch/propose.rs`): a proposal branch holding commits this
/// clone lacks, or one the remote refuses to create or move, is not built on, the next free
/// name is used and the report says so.
pub(super) fn propose(
    cli: &CliRepo,
    memory: &CliMemory,
    up: &CliUpstream,
    tip: &str,
    refusal: &str,
    net: &NetworkOptions,
    outcome: &mut SyncOutcome,
) -> Result<(), OpError> {
    let budget = &net.deadline;
    let user = memory_branch::proposal_user_of(
        cli.config("user.email", budget)?.as_deref(),
        cli.config("user.name", budget)?.as_deref(),
    );
    let remote = &up.remote;
    let mut passed = memory_branch::PassedOver::default();
    let names: Vec<(String, String)> = memory_branch::proposal_names(&user, tip).collect();
    'names: for (i, (_, name)) in names.into_iter().enumerate() {
        if passed.skips(i, memory_branch::PROPOSAL_TRIES) {
            continue;
        }
        let target = CliUpstream {
            local_ref: memory.local_ref(),
            remote: remote.clone(),
            merge_ref: format!("refs/heads/{name}"),
            tracking_ref: format!("refs/remotes/{remote}/{name}"),
        };
        let seen = match cli.fetch(&target, net) {
            Ok(seen) => seen,
            Err(failure) => {
                crate::ops::sync::network_skip(
                    outcome,
                    &failure,
                    SkipReason::PushRejected,
                    &format!(
                        " (after the remote refused the push to {}: {refusal})",
                        memory.name
                    ),
                );
                return Ok(());
            }
        };
        if let Some(seen) = &seen {
            if seen != tip && !cli.is_ancestor(seen, tip, budget)? {
                // Commits this clone lacks: not the user's to build on.
                passed.foreign(&name);
                continue;
            }
        }
        if seen.as_deref() != Some(tip) {
            let expected = seen.as_deref();
            for url in cli.remote_urls(remote, true, budget)? {
                let why = match cli.push(&target, &url, expected, net) {
                    Ok(CliPush::Pushed) => continue,
                    Ok(CliPush::LeaseRefused) => format!(
                        "{name} moved while sync ran, so nothing was proposed; the commits stay \
                         on the local memory branch and the next sync proposes them"
                    ),
                    Ok(CliPush::Rejected(message)) => {
                        passed.refused(&name, &message);
                        continue 'names;
                    }
                    Err(failure) => {
                        crate::ops::sync::network_skip(
                            outcome,
                            &failure,
                            SkipReason::PushFailed,
                            "",
                        );
                        return Ok(());
                    }
                };
                outcome.skip(
                    SkipReason::PushRejected,
                    format!(
                        "the remote refused the push to {} ({refusal}), {why}",
                        memory.name
                    ),
                );
                return Ok(());
            }
        }
        // What the remote now holds there, as a fetch would record it: commits shown on a
        // proposal branch are never re-created.
        cli.run(
            &["update-ref", &target.tracking_ref, tip],
            budget,
            "recording the proposal branch (git update-ref)",
        )?;
        outcome.proposed(&memory.name, remote, &name, refusal, &passed.clauses());
        return Ok(());
    }
    outcome.nothing_proposed(&memory.name, refusal, &passed.clauses());
    Ok(())
}
