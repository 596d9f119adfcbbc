//! The memory branch refused the push: the user's proposal branch instead.

use git2::{Oid, Repository};

use crate::git::fetch;
use crate::git::memory_branch::{self, MemoryBranch};
use crate::git::push::{self, PushOutcome};
use crate::git::remote::NetworkOptions;
use crate::git::upstream::Upstream;
use crate::ops::OpError;
use crate::ops::sync::{self, SkipReason, SyncOutcome};

/// How many proposal branch names a sync tries: `<user>`, then `<user>-2` … `<user>-9`.
const PROPOSAL_NAMES: usize = 9;

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
    for n in 1..=PROPOSAL_NAMES {
        let branch = if n == 1 {
            user.clone()
        } else {
            format!("{user}-{n}")
        };
        let name = format!("{}{branch}", memory_branch::PROPOSALS_PREFIX);
        let Some(target) = memory.proposal(&branch) else {
            return Ok(());
        };
        let said = |outcome: &mut SyncOutcome, taken: &[String]| {
            outcome.proposal = Some(name.clone());
            if !taken.is_empty() {
                outcome.warnings.push(format!(
                    "{} holds commits this clone did not make, so it was not used; your memory \
                     is proposed on {name} instead",
                    taken.join(", ")
                ));
            }
            outcome.skip(
                SkipReason::Proposed,
                format!(
                    "the remote refused the push to {} ({refusal}), so your memory is proposed \
                     on {name} for a maintainer to merge; see it with `teammem review \
                     {remote}/{}..{remote}/{name}`; once merged, the next sync takes it in",
                    memory.name, memory.name
                ),
            );
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
    outcome.skip(
        SkipReason::PushRejected,
        format!(
            "the remote refused the push to {} ({refusal}), and every proposal branch name of \
             yours ({}) holds commits this clone did not make, so nothing was proposed; the \
             commits stay on the local memory branch",
            memory.name,
            taken.join(", ")
        ),
    );
    Ok(())
}
