//! The memory branch refused the push: the user's proposal branch instead.

use git2::{Oid, Repository};

use crate::git::fetch;
use crate::git::memory_branch::{self, MemoryBranch};
use crate::git::push::{self, PushOutcome};
use crate::git::remote::NetworkOptions;
use crate::git::upstream::Upstream;
use crate::ops::OpError;
use crate::ops::sync::{self, SkipReason, SyncOutcome};

/// The memory branch refused the push: the same commits go to the user's proposal branch
/// (`team-memory-proposals/<user>`), with a lease on what the remote holds there. A proposal
/// branch holding commits this clone lacks (someone else pushed there) is not adopted and does
/// not block: the commits go to the next free name (`<user>-2`, …), and the report says so.
pub(super) fn propose(
    repo: &Repository,
    memory: &MemoryBranch,
    up: &Upstream,
    tip: Oid,
    refusal: &str,
    net: &NetworkOptions,
    outcome: &mut SyncOutcome,
) -> Result<(), OpError> {
    let user = memory_branch::proposal_user(repo);
    let remote = &up.remote;
    let mut taken = Vec::new();
    for (branch, name) in memory_branch::proposal_names(&user) {
        let Some(target) = memory.proposal(&branch) else {
            return Ok(());
        };
        let said = |outcome: &mut SyncOutcome, taken: &[String]| {
            outcome.proposed(&memory.name, remote, &name, refusal, taken);
        };
        let seen = match fetch::fetch(repo, &target, net) {
            Ok(fetched) => fetched.tip,
            Err(failure) => {
                sync::network_skip(
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
        if seen == Some(tip) {
            said(outcome, &taken);
            return Ok(());
        }
        if seen.is_some_and(|s| !crate::git::history::contains(repo, tip, s).unwrap_or(false)) {
            // Commits this clone lacks: not the user's to build on.
            taken.push(name);
            continue;
        }
        match push::push(repo, &target, seen, net) {
            Ok(PushOutcome::Pushed { .. }) => said(outcome, &taken),
            Ok(PushOutcome::LeaseRefused) => outcome.skip(
                SkipReason::PushRejected,
                format!(
                    "the remote refused the push to {} ({refusal}), and {name} moved while \
                     sync ran, so nothing was proposed; the commits stay on the local memory \
                     branch and the next sync proposes them",
                    memory.name
                ),
            ),
            Ok(PushOutcome::Rejected { message }) => outcome.skip(
                SkipReason::PushRejected,
                format!(
                    "the remote refused the push to {} ({refusal}) and to {name} ({message}); \
                     the commits stay on the local memory branch",
                    memory.name
                ),
            ),
            Err(failure) => {
                sync::network_skip(outcome, &failure, SkipReason::PushFailed, "");
            }
        }
        return Ok(());
    }
    outcome.nothing_proposed(&memory.name, refusal, &taken);
    Ok(())
}
